// Durations as plans write them (src/plan/duration.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatPlanDuration, parseDuration } from '../../../src/plan/duration.js';

describe('durations', () => {
  const good: [string, number][] = [
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['0s', 0],
    ['2m30s500ms', 150_500],
  ];
  for (const [text, ms] of good) test(`${text} = ${ms} ms`, () => assert.equal(parseDuration(text), ms));
  for (const text of ['', '5', '5 m', 'm', '1d', '-5s', '5S', 's5', '1h 30m', '.5s']) {
    test(`${JSON.stringify(text)} is not a duration`, () => assert.equal(parseDuration(text), undefined));
  }
  test('formatPlanDuration writes the largest units', () => {
    assert.equal(formatPlanDuration(5_400_000), '1h30m');
    assert.equal(formatPlanDuration(1500), '1s500ms');
    assert.equal(formatPlanDuration(0), '0s');
  });
});
