import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PodQueue } from '../../../src/rollout/podQueue.js';
import { shortVerdict, standIns, waveStep, type WaveCounts } from '../../../src/rollout/waveFill.js';
import { partitionWaves } from '../../../src/rollout/waves.js';
import type { WaveSpec } from '../../../src/plan/types.js';

const counts = (c: Partial<WaveCounts>): WaveCounts => ({
  target: 1,
  atTarget: 0,
  pending: 0,
  inFlight: 0,
  queued: 5,
  stopping: false,
  ...c,
});

describe('waveStep', () => {
  const rows: [string, Partial<WaveCounts>, ReturnType<typeof waveStep>][] = [
    ['a fresh canary wave takes one pod', {}, { kind: 'take', count: 1 }],
    ['a pod pending counts toward the count', { pending: 1 }, { kind: 'wait' }],
    ['the canary waits for its node (not pending): the next pod stands in', { pending: 0 }, { kind: 'take', count: 1 }],
    ['count met, a pod still in flight: the wave stays open', { atTarget: 1, inFlight: 1 }, { kind: 'wait' }],
    ['count met, nothing in flight: done', { atTarget: 1 }, { kind: 'done' }],
    [
      'no pod left, count not met: short by the missing pods',
      { target: 3, atTarget: 1, queued: 0 },
      { kind: 'short', missing: 2 },
    ],
    ['takes no more than the queue holds', { target: 10, queued: 3 }, { kind: 'take', count: 3 }],
    ['stopping with pods pending: waits for them', { stopping: true, pending: 2 }, { kind: 'wait' }],
    ['stopping, nothing pending: stopped', { stopping: true }, { kind: 'stopped' }],
  ];
  for (const [name, c, want] of rows) test(name, () => assert.deepEqual(waveStep(counts(c)), want));
});

describe('shortVerdict', () => {
  const base = { wave: 1, target: 1, atTarget: 0, waitingForNodes: 1, failed: 0, gateDue: true };
  test('pods waiting for their node, a gate due: Partial before the gate, saying why', () => {
    assert.deepEqual(shortVerdict(base), {
      kind: 'partial',
      message:
        'wave 1 reached 0 of its 1 pod at target and has no pod left to take (1 waiting for their node): the gates after it were not run',
    });
  });
  test('only failures within maxFailed, a gate due: a halt', () => {
    const v = shortVerdict({ ...base, target: 4, atTarget: 3, waitingForNodes: 0, failed: 1 });
    assert.equal(v.kind, 'halt');
    assert.match(
      v.kind === 'halt' ? v.message : '',
      /^wave 1 reached 3 of its 4 pods at target .*\(1 failed within maxFailed\)/,
    );
  });
  test('no gate due: the run goes on', () => {
    assert.deepEqual(shortVerdict({ ...base, gateDue: false }), { kind: 'go-on' });
  });
});

describe('PodQueue', () => {
  // Pods a..f on nodes x, y, x, y, z, x.
  const nodes: Record<string, string> = { a: 'x', b: 'y', c: 'x', d: 'y', e: 'z', f: 'x' };
  const queue = () => new PodQueue(['a', 'b', 'c', 'd', 'e', 'f'], (p) => nodes[p]);
  test('takes in order, passing over pods whose node cannot act; they keep their place', () => {
    const q = queue();
    const xDown = (n: string) => n !== 'x';
    assert.deepEqual([q.take(xDown), q.take(xDown)], ['b', 'd']);
    assert.equal(q.size, 4);
    // x is back: a and c come first again, in order.
    assert.deepEqual([q.take(() => true), q.take(() => true), q.take(() => true)], ['a', 'c', 'e']);
  });
  test('when every pod left waits for its node, it gives the first of them (the run parks it)', () => {
    const q = queue();
    const only = (ok: string) => (n: string) => n === ok;
    assert.equal(q.take(only('z')), 'e');
    assert.deepEqual([q.take(() => false), q.take(() => false)], ['a', 'b']);
    assert.equal(q.size, 3);
  });
  test('peek shows what a take would give, taking nothing', () => {
    const q = queue();
    assert.deepEqual(
      q.peek(3, (n) => n !== 'x'),
      ['b', 'd', 'e'],
    );
    assert.equal(q.size, 6);
  });
  test('pods left mid-flow come first, taken while they lead, whatever their node', () => {
    const q = queue();
    assert.deepEqual(
      q.takeFrontWhile((p) => p === 'a' || p === 'b'),
      ['a', 'b'],
    );
    assert.equal(
      q.take(() => true),
      'c',
    );
  });
});

const CANARY_THEN_ALL: WaveSpec = {
  kind: 'targets',
  targets: [
    { kind: 'count', value: 1 },
    { kind: 'fraction', value: 1 },
  ],
};

describe('standIns (kwave plan)', () => {
  test("the canary's node cannot act: the next pod stands in; it waits for its turn in the last wave", () => {
    const p = partitionWaves(['a', 'b', 'c', 'd', 'e', 'f'], 0, CANARY_THEN_ALL);
    assert.deepEqual(
      standIns(p, (x) => x === 'a'),
      [
        { wave: 1, standIns: ['b'], waiting: ['a'] },
        { wave: 2, standIns: [], waiting: ['a'] },
      ],
    );
  });
  test('every node can act: nothing to show', () => {
    const p = partitionWaves(['a', 'b', 'c'], 0, CANARY_THEN_ALL);
    assert.deepEqual(
      standIns(p, () => false),
      [],
    );
  });
});
