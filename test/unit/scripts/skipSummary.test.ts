// The closing lines of `npm test`: what was skipped, why, and the command that installs it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { skipSummary, skippedTests } from '../../../scripts/skipSummary.mjs';

const TAP = `TAP version 13
# Subtest: Pushgateway
ok 1 - Pushgateway # SKIP prometheus-pushgateway is not on PATH (Debian: apt-get install prometheus-pushgateway); .ci/run installs it
    ok 1 - a query over the gate # SKIP prometheus is not on PATH (Debian: apt-get install prometheus); .ci/run installs it
    ok 2 - a second query # SKIP prometheus is not on PATH (Debian: apt-get install prometheus); .ci/run installs it
ok 2 - passes
not ok 3 - fails
ok 4 - bare # SKIP
# skipped 4
`;

describe('skipSummary', () => {
  test('groups skipped tests by reason, first seen first', () => {
    assert.deepEqual(skippedTests(TAP), [
      { reason: 'prometheus-pushgateway is not on PATH (Debian: apt-get install prometheus-pushgateway); .ci/run installs it', tests: ['Pushgateway'] },
      { reason: 'prometheus is not on PATH (Debian: apt-get install prometheus); .ci/run installs it', tests: ['a query over the gate', 'a second query'] },
      { reason: 'no reason given', tests: ['bare'] },
    ]);
  });

  test('ends with the one command that installs what is missing', () => {
    const lines = skipSummary(TAP);
    assert.equal(lines[0], 'skipped 4 tests (or suites):');
    assert.ok(lines.includes('  2 × prometheus is not on PATH (Debian: apt-get install prometheus); .ci/run installs it: a query over the gate; a second query'));
    assert.equal(lines.at(-1), 'to run them: apt-get install prometheus prometheus-pushgateway — or .ci/run, which installs everything the tests use');
  });

  test('says nothing when nothing was skipped', () => {
    assert.deepEqual(skipSummary('TAP version 13\nok 1 - a\n'), []);
  });
});
