// What a command's start loads, read from the bundle (scripts/bundle-cli.mjs): the modules a chunk
// imports statically are compiled before anything runs, so the Kubernetes client (1.4 MB of
// client-node and undici) must be reached only through the commands that talk to a cluster.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const CLI = join(import.meta.dirname, '../../../dist/cli');

/** The files `file` loads before it runs: itself and its static imports, transitively. */
function staticGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/^import\s+(?:[^;]*?\sfrom\s+)?"(\.\.?\/[^"]+)";/gm))
    staticGraph(join(dirname(file), m[1]!), seen);
  return seen;
}

/** The bundled packages and kwave modules in those files, by esbuild's `// path` comments. */
function modulesIn(files: Set<string>): string[] {
  return [...files].flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(/^\/\/ ((?:node_modules|dist)\/\S+)$/gm)].map((m) => m[1]!),
  );
}

const CLIENT = /^node_modules\/(@kubernetes\/client-node|undici)\//;

describe('the CLI start', () => {
  test('every command starts without the Kubernetes client', () => {
    const modules = modulesIn(staticGraph(join(CLI, 'bundle.js')));
    assert.ok(
      modules.some((m) => m.startsWith('node_modules/commander/')),
      'the graph was read',
    );
    assert.deepEqual(
      modules.filter((m) => CLIENT.test(m)),
      [],
    );
  });

  test('kwave validate loads the plan loader and yaml, not the Kubernetes client', () => {
    const bundle = readFileSync(join(CLI, 'bundle.js'), 'utf8');
    const validate = /import\("\.\/(chunks\/validate-[A-Z0-9]+\.js)"\)/.exec(bundle)?.[1];
    assert.ok(validate, 'bundle.js imports the validate command');
    const modules = modulesIn(staticGraph(join(CLI, validate)));
    assert.ok(modules.includes('dist/plan/load.js'));
    assert.ok(modules.some((m) => m.startsWith('node_modules/yaml/')));
    assert.deepEqual(
      modules.filter((m) => CLIENT.test(m)),
      [],
    );
  });
});
