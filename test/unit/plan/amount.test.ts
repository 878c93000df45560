// Counts and percentages in plans (src/plan/amount.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAmount, formatAmount } from '../../../src/plan/amount.js';

describe('amounts', () => {
  test('counts and percentages', () => {
    assert.deepEqual(parseAmount(3), { kind: 'count', value: 3 });
    assert.deepEqual(parseAmount('10%'), { kind: 'fraction', value: 0.1 });
    assert.deepEqual(parseAmount('12.5%'), { kind: 'fraction', value: 0.125 });
    assert.deepEqual(parseAmount('100%'), { kind: 'fraction', value: 1 });
    assert.equal(parseAmount('10'), undefined);
    assert.equal(parseAmount(1.5), undefined);
    assert.equal(parseAmount('ten'), undefined);
    assert.equal(formatAmount({ kind: 'fraction', value: 0.125 }), '12.5%');
  });
});
