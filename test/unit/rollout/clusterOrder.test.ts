// The order of a multi-cluster plan's waves across clusters: the pure ordering (tables), and the
// coordinator that hands out turns by it to runners going at their own pace (a property: however
// the runners interleave their asks, the steps run exactly in orderSteps' order, one at a time).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mayStartWave, orderSteps, stepKey, type ClusterPosition } from '../../../src/rollout/clusterOrder.js';
import { ClusterTurns } from '../../../src/rollout/clusterTurns.js';
import type { ClusterOrder } from '../../../src/plan/types.js';

const three = [
  { name: 'eu-1', waves: [1, 2, 3] },
  { name: 'us-1', waves: [1, 2, 3] },
  { name: 'ap-1', waves: [1, 2, 3] },
];
const steps = (order: ClusterOrder, clusters: { name: string; waves: number[] }[]) =>
  orderSteps(order, clusters).map((s) => `${s.cluster}:${s.wave}`);

describe('orderSteps', () => {
  const cases: {
    name: string;
    order: ClusterOrder;
    clusters: { name: string; waves: number[] }[];
    expected: string[];
  }[] = [
    {
      name: 'sequential: every wave of a cluster, then the next cluster',
      order: 'sequential',
      clusters: three,
      expected: ['eu-1:1', 'eu-1:2', 'eu-1:3', 'us-1:1', 'us-1:2', 'us-1:3', 'ap-1:1', 'ap-1:2', 'ap-1:3'],
    },
    {
      name: 'interleaved: wave i in every cluster before wave i+1',
      order: 'interleaved',
      clusters: three,
      expected: ['eu-1:1', 'us-1:1', 'ap-1:1', 'eu-1:2', 'us-1:2', 'ap-1:2', 'eu-1:3', 'us-1:3', 'ap-1:3'],
    },
    {
      name: 'the listed order is kept, not sorted by name',
      order: 'interleaved',
      clusters: [
        { name: 'zz', waves: [1, 2] },
        { name: 'aa', waves: [1, 2] },
      ],
      expected: ['zz:1', 'aa:1', 'zz:2', 'aa:2'],
    },
    {
      name: 'a resumed cluster with its first waves done has only the rest',
      order: 'interleaved',
      clusters: [
        { name: 'a', waves: [3] },
        { name: 'b', waves: [1, 2, 3] },
      ],
      expected: ['b:1', 'b:2', 'a:3', 'b:3'],
    },
    {
      name: 'a cluster with nothing left has no step',
      order: 'sequential',
      clusters: [
        { name: 'a', waves: [] },
        { name: 'b', waves: [1, 2] },
      ],
      expected: ['b:1', 'b:2'],
    },
    {
      name: 'clusters with fewer waves (few pods) drop out of later rounds',
      order: 'interleaved',
      clusters: [
        { name: 'a', waves: [1] },
        { name: 'b', waves: [1, 2] },
      ],
      expected: ['a:1', 'b:1', 'b:2'],
    },
    {
      name: 'one cluster: its waves in order either way',
      order: 'sequential',
      clusters: [{ name: 'a', waves: [1, 2] }],
      expected: ['a:1', 'a:2'],
    },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(steps(c.order, c.clusters), c.expected));
});

describe('stepKey', () => {
  test('sequential sorts by cluster first, interleaved by wave first', () => {
    assert.deepEqual(stepKey('sequential', 1, 3), [1, 3]);
    assert.deepEqual(stepKey('interleaved', 1, 3), [3, 1]);
  });
});

describe('mayStartWave', () => {
  const cases: {
    name: string;
    order: ClusterOrder;
    positions: ClusterPosition[];
    index: number;
    wave: number;
    expected: boolean;
  }[] = [
    {
      name: 'sequential: the second cluster waits while the first has waves left',
      order: 'sequential',
      positions: [3, 1, 1],
      index: 1,
      wave: 1,
      expected: false,
    },
    {
      name: 'sequential: the second cluster starts once the first is done',
      order: 'sequential',
      positions: ['done', 1, 1],
      index: 1,
      wave: 1,
      expected: true,
    },
    {
      name: 'sequential: the first cluster goes on through its waves while the others wait',
      order: 'sequential',
      positions: [2, 1, 1],
      index: 0,
      wave: 2,
      expected: true,
    },
    {
      name: 'sequential: the third waits for the second even when the first is done',
      order: 'sequential',
      positions: ['done', 2, 1],
      index: 2,
      wave: 1,
      expected: false,
    },
    {
      name: 'interleaved: the second cluster starts wave 1 once the first finished it',
      order: 'interleaved',
      positions: [2, 1, 1],
      index: 1,
      wave: 1,
      expected: true,
    },
    {
      name: 'interleaved: the first may not start wave 2 before the others ran wave 1',
      order: 'interleaved',
      positions: [2, 1, 1],
      index: 0,
      wave: 2,
      expected: false,
    },
    {
      name: 'interleaved: the first starts wave 2 once every cluster finished wave 1',
      order: 'interleaved',
      positions: [2, 2, 2],
      index: 0,
      wave: 2,
      expected: true,
    },
    {
      name: 'interleaved: a cluster that is done holds nobody back',
      order: 'interleaved',
      positions: [2, 'done', 2],
      index: 0,
      wave: 2,
      expected: true,
    },
    {
      name: 'interleaved: a cluster that has not asked yet (position 1) holds back wave 2',
      order: 'interleaved',
      positions: [2, 2, 1],
      index: 0,
      wave: 2,
      expected: false,
    },
    {
      name: 'interleaved: a resumed cluster asking for wave 3 waits for the others to finish wave 2',
      order: 'interleaved',
      positions: [3, 2, 2],
      index: 0,
      wave: 3,
      expected: false,
    },
  ];
  for (const c of cases)
    test(c.name, () => assert.equal(mayStartWave(c.order, c.positions, c.index, c.wave), c.expected));
});

/** Runners that go through their waves, yielding between steps a number of times the property picks. */
async function runAll(
  turns: ClusterTurns,
  clusters: { name: string; waves: number[] }[],
  delays: number[][],
  ran: string[],
  running: Set<string>,
) {
  const stop = new AbortController().signal;
  const tick = async (n: number) => {
    for (let i = 0; i < n; i++) await Promise.resolve();
  };
  await Promise.all(
    clusters.map(async (c, index) => {
      const turn = turns.turn(index);
      await tick(delays[index]?.[0] ?? 0);
      for (const [k, wave] of c.waves.entries()) {
        if (!(await turn.startWave(wave, stop))) break;
        running.add(c.name);
        assert.equal(running.size, 1, `two clusters at once: ${[...running].join(', ')}`);
        ran.push(`${c.name}:${wave}`);
        await tick(delays[index]?.[k + 1] ?? 0);
        running.delete(c.name);
      }
      await turn.allDone(stop);
      turns.finished(index);
    }),
  );
}

describe('ClusterTurns', () => {
  test('runs the steps in orderSteps order, one at a time, however the runners are paced', async () => {
    const wavesArb = fc
      .uniqueArray(fc.integer({ min: 1, max: 4 }), { maxLength: 4 })
      .map((w) => w.sort((a, b) => a - b));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<ClusterOrder>('sequential', 'interleaved'),
        fc.array(wavesArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.array(fc.nat(5), { maxLength: 6 }), { maxLength: 4 }),
        async (order, waves, delays) => {
          const clusters = waves.map((w, i) => ({ name: `c${i}`, waves: w }));
          const turns = new ClusterTurns(
            order,
            clusters.map((c) => c.name),
          );
          const ran: string[] = [];
          await runAll(turns, clusters, delays, ran, new Set());
          assert.deepEqual(ran, steps(order, clusters));
        },
      ),
    );
  });

  test('a halt in one cluster: the others waiting for their turn get false and hear why', async () => {
    const turns = new ClusterTurns('sequential', ['eu-1', 'us-1', 'ap-1']);
    const stop = new AbortController().signal;
    const heard: string[] = [];
    const t = [0, 1, 2].map((i) => turns.turn(i));
    t[2]!.planHalted.addEventListener('abort', () => heard.push(String(t[2]!.planHalted.reason)));
    assert.equal(await t[0]!.startWave(1, stop), true);
    const first = t[0]!.allDone(stop);
    const third = t[2]!.startWave(1, stop);
    assert.equal(await t[1]!.startWave(1, stop), true);
    turns.haltFrom(1, '2 pods failed, more than maxFailed 1');
    turns.haltFrom(2, 'a later halt changes nothing');
    assert.equal(await third, false);
    assert.equal(await first, false);
    assert.deepEqual(heard, ['cluster us-1 halted: 2 pods failed, more than maxFailed 1']);
    assert.deepEqual(turns.halt, { cluster: 'us-1', message: '2 pods failed, more than maxFailed 1' });
  });

  test('a stop (SIGINT) ends a wait for a turn with false', async () => {
    const turns = new ClusterTurns('sequential', ['a', 'b']);
    const stop = new AbortController();
    const waiting = turns.turn(1).startWave(1, stop.signal);
    stop.abort();
    assert.equal(await waiting, false);
    assert.equal(turns.halt, undefined);
  });
});
