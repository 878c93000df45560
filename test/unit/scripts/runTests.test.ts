// scripts/run-tests.mjs (the README's test command): every skip is named in the run's last lines
// with its reason, and KWAVE_TEST_NO_SKIPS=1 (set by .ci/run) fails a run that skipped a test for
// a missing prerequisite.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = 'test/fixtures/run-tests/skips.fixture.ts';

function runTests(env: Record<string, string>) {
  // Without NODE_TEST_CONTEXT: set by the runner running this file, it would make the child a
  // subtest of this run instead of a run of its own.
  const { NODE_TEST_CONTEXT: _inherited, ...parentEnv } = process.env;
  const r = spawnSync(process.execPath, ['scripts/run-tests.mjs', FIXTURE], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...parentEnv, ...env },
    timeout: 120_000,
  });
  return { status: r.status, lastLines: r.stdout.trimEnd().split('\n').slice(-3) };
}

describe('run-tests.mjs', () => {
  test('names every skip and its reason in the last lines', () => {
    const { status, lastLines } = runTests({ KWAVE_TEST_NO_SKIPS: '' });
    assert.equal(status, 0);
    assert.equal(lastLines[0], 'skipped: 2 tests, 1 of them for a missing prerequisite');
    assert.ok(
      lastLines.includes(
        `  skipped 1 test in ${FIXTURE}: missing prerequisite: sometool is not on PATH; install: apt-get install sometool`,
      ),
      lastLines.join('\n'),
    );
    assert.ok(
      lastLines.includes(`  skipped 1 test in ${FIXTURE}: embedded backend only: reads the store`),
      lastLines.join('\n'),
    );
  });

  test('fails the run under KWAVE_TEST_NO_SKIPS=1 when a prerequisite is missing', () => {
    const { status, lastLines } = runTests({ KWAVE_TEST_NO_SKIPS: '1' });
    assert.equal(status, 1);
    assert.match(lastLines.at(-1) ?? '', /FAILED: tests were skipped for a missing prerequisite/);
  });
});
