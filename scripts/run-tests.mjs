// Runs node's test runner over every *.test.ts under the given folders (default: test/).
// Node 20 does not expand globs itself, and `node --test` with no files runs nothing.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return path.endsWith('.test.ts') ? [path] : [];
  });
}

const roots = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('-'));
const files = (roots.length ? roots : ['test']).flatMap((r) => (r.endsWith('.ts') ? [r] : findTests(r))).sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const concurrency = process.env.KWAVE_TEST_CONCURRENCY ?? '2';
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...flags, ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
