// The two ways kwave shows a duration to people (src/durationText.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatAge, formatDuration } from '../../src/durationText.js';

describe('formatDuration', () => {
  test('durations', () => {
    assert.deepEqual([850, 2100, 9990, 42_400, 185_000, 3_725_000].map(formatDuration), [
      '850ms',
      '2.1s',
      '9.9s',
      '42s',
      '3m05s',
      '1h02m',
    ]);
    // A time already past reads 0s (it was '-' in the output modes' own formatter, '0s' in status's).
    assert.equal(formatDuration(-1), '0s');
    assert.equal(formatDuration(Number.NaN), '-');
  });
  test('a pause and a timeout read as the plan meant them', () => {
    assert.deepEqual([2000, 2500, 58_000, 300_000].map(formatDuration), ['2.0s', '2.5s', '58s', '5m00s']);
  });
  test('short and readable at every scale', () => {
    const cases: [number, string][] = [
      [0, '0s'],
      [-5000, '0s'],
      [45_000, '45s'],
      [185_000, '3m05s'],
      [7_620_000, '2h07m'],
      [273_600_000, '3d04h'],
    ];
    for (const [ms, text] of cases) assert.equal(formatDuration(ms), text, String(ms));
  });
});

describe('formatAge', () => {
  test('ages', () => {
    assert.deepEqual([0, 59_999, 120_000, 7_200_000, 7_260_000, -5].map(formatAge), [
      '0s',
      '59s',
      '2m',
      '2h',
      '2h1m',
      '0s',
    ]);
  });
});
