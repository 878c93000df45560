// SlotLimit: a start that gives its slot way queues again behind the pods queued meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GAVE_WAY, SlotLimit } from '../../../src/rollout/slotLimit.js';

test('a start that gives way runs again after the pod it gave way to', async () => {
  let wakes = 0;
  const limit = new SlotLimit(1, () => wakes++);
  const order: string[] = [];
  let gaveWay = false;
  const a = limit.run('a', async (queued) => {
    // `b` queues while `a` holds the slot: `a` gives way to it, once.
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (!gaveWay && queued.has('b')) {
      gaveWay = true;
      order.push('a gave way');
      return GAVE_WAY;
    }
    order.push('a');
    return 'a done';
  });
  const b = limit.run('b', async () => {
    order.push('b');
    return 'b done';
  });
  assert.deepEqual(await Promise.all([a, b]), ['a done', 'b done']);
  assert.deepEqual(order, ['a gave way', 'b', 'a']);
  assert.equal(wakes, 3, 'each queueing wakes the budget waiters');
});
