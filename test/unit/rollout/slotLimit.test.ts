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

test('at most `concurrency` at once, started in the order queued, each ended once', async () => {
  const limit = new SlotLimit(3, () => {});
  let active = 0;
  let most = 0;
  const started: number[] = [];
  const ended: number[] = [];
  await Promise.all(
    Array.from(
      { length: 20 },
      (_, i) =>
        new Promise<void>((done, fail) =>
          limit.queue(
            `p${i}`,
            async () => {
              started.push(i);
              most = Math.max(most, ++active);
              await new Promise((resolve) => setTimeout(resolve, (i * 7) % 5));
              active--;
              return i;
            },
            (n) => {
              ended.push(n);
              done();
            },
            fail,
          ),
        ),
    ),
  );
  assert.equal(most, 3);
  assert.deepEqual(started, [...Array(20).keys()]);
  assert.deepEqual(
    [...ended].sort((a, b) => a - b),
    [...Array(20).keys()],
  );
});

test('a start that throws, at once or later, fails its pod and frees its slot', async () => {
  const limit = new SlotLimit(1, () => {});
  const sync = limit.run('a', () => {
    throw new Error('at once');
  });
  const later = limit.run('b', async () => {
    await Promise.resolve();
    throw new Error('later');
  });
  const next = limit.run('c', async () => 'c done');
  await assert.rejects(sync, /at once/);
  await assert.rejects(later, /later/);
  assert.equal(await next, 'c done');
});

test('no start runs inside the call that queues it', () => {
  const limit = new SlotLimit(5, () => {});
  let ran = false;
  limit.queue(
    'a',
    async () => ((ran = true), 1),
    () => {},
    () => {},
  );
  assert.equal(ran, false);
});
