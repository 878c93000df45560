// Runs node's test runner over every *.test.ts under the given folders (default: test/).
// Node 20 does not expand globs itself, and `node --test` with no files runs nothing.
//
// Around node's own run it adds what a shared CI machine needs:
// - dist/ is rebuilt first when any src/ file is newer than its output (the e2e suites run the
//   built CLI, and a stale one would be tested silently);
// - every test has a timeout (KWAVE_TEST_TIMEOUT_MS, default 8 min), so a hang fails that test
//   instead of stalling the run;
// - every skip is collected by scripts/skip-reporter.mjs and printed in the last lines with its
//   reason; with KWAVE_TEST_NO_SKIPS=1 (set by .ci/run) a skip for a missing prerequisite fails the
//   run.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { staleSource } from './stale-dist.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The prefix test/e2e/helpers/prerequisites.ts puts on a skip reason for a missing tool. */
const MISSING_PREREQUISITE = 'missing prerequisite:';

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

const stale = staleSource(ROOT);
if (stale) {
  console.error(`run-tests: dist/ is older than ${stale}; building first (npm run build)`);
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) {
    console.error('run-tests: the build failed; not testing a stale dist/');
    process.exit(1);
  }
}

const concurrency = process.env.KWAVE_TEST_CONCURRENCY ?? '2';
const timeoutMs = process.env.KWAVE_TEST_TIMEOUT_MS ?? String(8 * 60_000);
const scratch = mkdtempSync(join(tmpdir(), 'kwave-run-tests-'));
const skipsFile = join(scratch, 'skips.jsonl');
// Node writes one reporter per --test-reporter; naming ours means naming the usual one too.
const ownReporter = flags.some((f) => f.startsWith('--test-reporter'));
const reporters = ownReporter
  ? []
  : ['--test-reporter', process.stdout.isTTY ? 'spec' : 'tap', '--test-reporter-destination', 'stdout'];
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${timeoutMs}`,
    ...reporters,
    '--test-reporter',
    join(ROOT, 'scripts/skip-reporter.mjs'),
    '--test-reporter-destination',
    skipsFile,
    ...flags,
    ...files,
  ],
  { stdio: 'inherit' },
);

let skips = [];
try {
  skips = readFileSync(skipsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
} catch {
  // No file: the run ended before the reporter wrote anything.
}
rmSync(scratch, { recursive: true, force: true });

let code = result.status ?? 1;
if (skips.length > 0) {
  const missing = skips.filter((s) => s.reason.startsWith(MISSING_PREREQUISITE));
  const groups = new Map();
  for (const s of skips) {
    const key = `${relative(ROOT, fileURLToPath(s.file.startsWith('file:') ? s.file : `file://${s.file}`))}\u0000${s.reason}`;
    const g = groups.get(key) ?? { tests: 0, suites: 0 };
    if (s.type === 'suite') g.suites += 1;
    else g.tests += 1;
    groups.set(key, g);
  }
  const tests = skips.filter((s) => s.type !== 'suite').length;
  console.log(
    `\nskipped: ${tests} tests${skips.length > tests ? ` and ${skips.length - tests} whole suites (tests inside not counted)` : ''}, ${missing.length} of them for a missing prerequisite`,
  );
  for (const [key, g] of groups) {
    const [file, reason] = key.split('\u0000');
    const what = [
      g.tests ? `${g.tests} test${g.tests > 1 ? 's' : ''}` : '',
      g.suites ? `${g.suites} suite${g.suites > 1 ? 's' : ''}` : '',
    ]
      .filter(Boolean)
      .join(' + ');
    console.log(`  skipped ${what} in ${file}: ${reason || '(no reason given)'}`);
  }
  if (missing.length > 0 && process.env.KWAVE_TEST_NO_SKIPS === '1') {
    console.log(
      'run-tests: FAILED: tests were skipped for a missing prerequisite (KWAVE_TEST_NO_SKIPS=1); install it and run again',
    );
    if (code === 0) code = 1;
  }
} else {
  console.log('\nskipped: none');
}
process.exit(code);
