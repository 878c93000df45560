// The CLI as one ES module, dist/cli/bundle.js, built from dist/ by esbuild (bin/kwave.js runs
// it). Why: loaded file by file, client-node alone is about 1,000 modules (its generated API and
// models): 0.8 s of CPU and 75 MB before kwave does anything, at every start. As one file, kwave
// starts in about 0.3 s and 80 MB. The library (dist/index.js) stays unbundled.
// The dependencies are bundled in; those written as CommonJS call require(), given here through
// createRequire (resolved from dist/cli/, so a require() left dynamic still finds node_modules).
import { build } from 'esbuild';

await build({
  entryPoints: ['dist/cli/main.js'],
  outfile: 'dist/cli/bundle.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: "import { createRequire as kwaveCreateRequire } from 'node:module'; const require = kwaveCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
