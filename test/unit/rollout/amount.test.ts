import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveAmount, snapToInteger } from '../../../src/rollout/amount.js';

describe('resolveAmount', () => {
  const rows: {
    name: string;
    amount: Parameters<typeof resolveAmount>[0];
    total: number;
    rounding: 'up' | 'down';
    want: number;
  }[] = [
    { name: 'a count is taken as written', amount: { kind: 'count', value: 3 }, total: 100, rounding: 'up', want: 3 },
    {
      name: 'a count larger than the total is not capped here',
      amount: { kind: 'count', value: 30 },
      total: 10,
      rounding: 'down',
      want: 30,
    },
    { name: '10% of 25 rounded up is 3', amount: { kind: 'fraction', value: 0.1 }, total: 25, rounding: 'up', want: 3 },
    {
      name: '10% of 25 rounded down is 2',
      amount: { kind: 'fraction', value: 0.1 },
      total: 25,
      rounding: 'down',
      want: 2,
    },
    {
      name: '10% of 30 is 3 both ways despite 0.1 × 30 = 3.0000000000000004',
      amount: { kind: 'fraction', value: 0.1 },
      total: 30,
      rounding: 'up',
      want: 3,
    },
    {
      name: '29% of 100 is 29 despite 0.29 × 100 = 28.999999999999996',
      amount: { kind: 'fraction', value: 0.29 },
      total: 100,
      rounding: 'down',
      want: 29,
    },
    { name: '100% of 7 is 7', amount: { kind: 'fraction', value: 1 }, total: 7, rounding: 'up', want: 7 },
    { name: '0% is 0', amount: { kind: 'fraction', value: 0 }, total: 7, rounding: 'up', want: 0 },
    { name: 'a share of nothing is 0', amount: { kind: 'fraction', value: 0.5 }, total: 0, rounding: 'up', want: 0 },
  ];
  for (const r of rows) {
    test(r.name, () => assert.equal(resolveAmount(r.amount, r.total, r.rounding), r.want));
  }
});

test('snapToInteger leaves real fractions alone', () => {
  assert.equal(snapToInteger(2.5), 2.5);
  assert.equal(snapToInteger(0.1 * 30), 3);
  assert.equal(snapToInteger(-0.000000000001), 0);
});
