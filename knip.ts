// The dead-export check of `npm run lint`: every export of src/ (and of the tests' and benches'
// helpers) must be imported somewhere, or be part of the package's API (src/index.ts,
// src/sim/index.ts). Entry points: what runs a file by its name.
import type { KnipConfig } from 'knip';

const config: KnipConfig = {
  entry: [
    'src/index.ts',
    'src/sim/index.ts',
    'src/cli/main.ts',
    // The thread `kwave sim` serves from, loaded by file name (cli/simThread.ts).
    'src/cli/simWorker.ts',
    'scripts/*.{ts,mjs}',
    'test/**/*.test.ts',
    // Files tests run as child processes by name.
    'test/e2e/helpers/*Child.ts',
    'test/fixtures/run-tests/*.fixture.ts',
    'bench/*.ts',
    'bench/fleet/*.{ts,mjs}',
  ],
  project: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.{ts,mjs}', 'scripts/**/*.{ts,mjs}', 'bin/*.js'],
  // Tools the tests and scripts run from the machine, not from npm.
  ignoreBinaries: ['go', 'unshare', 'kubectl'],
  // Served to the browser as files (src/dashboard/server.ts resolves them), never imported.
  ignoreDependencies: ['uplot'],
};

export default config;
