// Duration flags shared by commands: plan syntax (`10s`, `2m`) to ms, a usage error naming the flag.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDurationFlag, parseLinger } from '../../../../src/cli/commands/flags.js';
import { KwaveError } from '../../../../src/errors.js';

describe('parseDurationFlag', () => {
  test('a duration in plan syntax is ms; not given is undefined', () => {
    assert.equal(parseDurationFlag('10s', '--wait'), 10_000);
    assert.equal(parseDurationFlag('2m', '--wait'), 120_000);
    assert.equal(parseDurationFlag('0s', '--wait'), 0);
    assert.equal(parseDurationFlag(undefined, '--wait'), undefined);
  });

  test('anything else is a usage error (exit 2) naming the flag and the value', () => {
    for (const bad of ['10', 'soon', '', true, 5]) {
      assert.throws(
        () => parseDurationFlag(bad, '--wait'),
        (err: unknown) =>
          err instanceof KwaveError &&
          err.code === 'USAGE' &&
          err.exitCode === 2 &&
          err.message === `--wait: expected a duration like "10s" or "0s", found "${String(bad)}"`,
        String(bad),
      );
    }
  });
});

test('parseLinger is --metrics-linger', () => {
  assert.equal(parseLinger('1m'), 60_000);
  assert.throws(() => parseLinger('x'), /^KwaveError: --metrics-linger: expected a duration/);
});
