// Runs node's test runner over every *.test.ts under the given folders (default: test/).
// Node 20 does not expand globs itself, and `node --test` with no files runs nothing.
// The last lines say what was skipped and why (scripts/skipSummary.mjs), read from a second,
// TAP reporter written to a temporary file beside the usual one.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { skipSummary } from './skipSummary.mjs';

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
// Node's own default: spec on a terminal, TAP otherwise; unless the caller chose reporters.
const chosen = flags.some((f) => f.startsWith('--test-reporter'));
const dir = mkdtempSync(join(tmpdir(), 'kwave-tests-'));
const tapFile = join(dir, 'report.tap');
const reporters = chosen
  ? []
  : [`--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`, '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tapFile}`];
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporters, ...flags, ...files],
  { stdio: 'inherit' },
);
if (!chosen) {
  try {
    const lines = skipSummary(readFileSync(tapFile, 'utf8'));
    if (lines.length > 0) console.log(['', ...lines].join('\n'));
  } catch {
    // No report (the runner did not start): its own error says why.
  }
}
rmSync(dir, { recursive: true, force: true });
process.exit(result.status ?? 1);
