import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Amount, WaveSpec } from '../../../src/plan/types.js';
import { partitionWaves, resolveTargets } from '../../../src/rollout/waves.js';

const pct = (p: number): Amount => ({ kind: 'fraction', value: p / 100 });
const n = (v: number): Amount => ({ kind: 'count', value: v });
const targets = (...t: Amount[]): WaveSpec => ({ kind: 'targets', targets: t });
const size = (s: Amount): WaveSpec => ({ kind: 'size', size: s });
const pods = (count: number) => Array.from({ length: count }, (_, i) => `p${i}`);
const canary = targets(n(1), pct(10), pct(50), pct(100));

describe('resolveTargets', () => {
  const rows: { name: string; spec: WaveSpec; selected: number; want: number[] }[] = [
    { name: '60 pods, [1, 10%, 50%, 100%]', spec: canary, selected: 60, want: [1, 6, 30, 60] },
    { name: '5 pods: a wave that would add nothing is raised by one', spec: canary, selected: 5, want: [1, 2, 3, 5] },
    { name: '2 pods: waves after the target reaches all pods are dropped', spec: canary, selected: 2, want: [1, 2] },
    { name: '1 pod: one wave', spec: canary, selected: 1, want: [1] },
    { name: '0 pods: no waves', spec: canary, selected: 0, want: [] },
    {
      name: '30 pods, 10% is 3 (not 4 from 0.1 × 30 = 3.0000000000000004)',
      spec: targets(pct(10), pct(100)),
      selected: 30,
      want: [3, 30],
    },
    { name: 'a count above the selection is capped', spec: targets(n(5), n(50)), selected: 20, want: [5, 20] },
    { name: 'partial: last target below 100%', spec: targets(n(1), pct(10)), selected: 100, want: [1, 10] },
    {
      name: 'partial on 3 pods: [1, 10%] raises wave 2 to 2 pods',
      spec: targets(n(1), pct(10)),
      selected: 3,
      want: [1, 2],
    },
    {
      name: 'decreasing targets are held at the previous one, then raised',
      spec: targets(pct(50), pct(20), pct(100)),
      selected: 10,
      want: [5, 6, 10],
    },
    { name: 'waveSize 20% of 12 = 3 per wave', spec: size(pct(20)), selected: 12, want: [3, 6, 9, 12] },
    { name: 'waveSize 5 of 12: last wave smaller', spec: size(n(5)), selected: 12, want: [5, 10, 12] },
    { name: 'waveSize 1% of 10 is at least 1 pod', spec: size(pct(1)), selected: 3, want: [1, 2, 3] },
    { name: 'waveSize 0 counts as 1', spec: size(n(0)), selected: 2, want: [1, 2] },
  ];
  for (const r of rows) test(r.name, () => assert.deepEqual(resolveTargets(r.spec, r.selected), r.want));
});

describe('partitionWaves', () => {
  test('fresh rollout of 100 pods: 1, 9, 40, 50', () => {
    const p = partitionWaves(pods(100), 0, targets(n(1), pct(10), pct(50), pct(100)));
    assert.deepEqual(
      p.waves.map((w) => [w.index, w.target, w.pods.length]),
      [
        [1, 1, 1],
        [2, 10, 9],
        [3, 50, 40],
        [4, 100, 50],
      ],
    );
    assert.deepEqual(p.waves[0]?.pods, ['p0']);
    assert.deepEqual(p.deferred, []);
    assert.equal(p.waveCount, 4);
    assert.equal(p.selected, 100);
  });

  test('already-done pods fill the targets first; satisfied waves keep their numbers', () => {
    const p = partitionWaves(pods(70), 30, targets(n(1), pct(10), pct(50), pct(100)));
    assert.deepEqual(p.satisfied, [1, 2]);
    assert.deepEqual(
      p.waves.map((w) => [w.index, w.target, w.pods.length]),
      [
        [3, 50, 20],
        [4, 100, 50],
      ],
    );
    assert.equal(p.alreadyDone, 30);
    assert.equal(p.selected, 100);
  });

  test('partial rollout: pods past the last target are deferred', () => {
    const p = partitionWaves(pods(100), 0, targets(n(1), pct(10)));
    assert.deepEqual(
      p.waves.map((w) => w.pods.length),
      [1, 9],
    );
    assert.equal(p.deferred.length, 90);
    assert.equal(p.deferred[0], 'p10');
  });

  test('a wider plan continues a partial rollout', () => {
    const p = partitionWaves(pods(90), 10, canary);
    assert.deepEqual(
      p.waves.map((w) => [w.index, w.pods.length]),
      [
        [3, 40],
        [4, 50],
      ],
    );
    assert.deepEqual(p.deferred, []);
  });

  test('everything already done: no waves', () => {
    const p = partitionWaves([], 12, canary);
    assert.deepEqual(p.waves, []);
    assert.deepEqual(p.satisfied, [1, 2, 3, 4]);
  });

  test('equal waves with a done pod count it in wave 1', () => {
    const p = partitionWaves(pods(11), 1, size(pct(20)));
    assert.deepEqual(
      p.waves.map((w) => [w.index, w.pods.length]),
      [
        [1, 2],
        [2, 3],
        [3, 3],
        [4, 3],
      ],
    );
  });

  const arbAmount = fc.oneof(
    fc.integer({ min: 0, max: 300 }).map(n),
    fc.integer({ min: 0, max: 100 }).map(pct),
    fc.double({ min: 0, max: 1, noNaN: true }).map((v): Amount => ({ kind: 'fraction', value: v })),
  );
  const arbSpec: fc.Arbitrary<WaveSpec> = fc.oneof(
    fc.array(arbAmount, { minLength: 1, maxLength: 6 }).map((t) => targets(...t)),
    arbAmount.map(size),
  );
  const arbCase = fc.record({
    todo: fc.integer({ min: 0, max: 250 }),
    done: fc.integer({ min: 0, max: 250 }),
    spec: arbSpec,
  });

  test('property: every to-do pod is in exactly one wave or deferred, in input order', () => {
    fc.assert(
      fc.property(arbCase, ({ todo, done, spec }) => {
        const input = pods(todo);
        const p = partitionWaves(input, done, spec);
        assert.deepEqual([...p.waves.flatMap((w) => w.pods), ...p.deferred], input);
      }),
    );
  });

  test('property: never an empty wave; indexes rise; targets met after each wave', () => {
    fc.assert(
      fc.property(arbCase, ({ todo, done, spec }) => {
        const p = partitionWaves(pods(todo), done, spec);
        const t = resolveTargets(spec, todo + done);
        let reached = done;
        let lastIndex = 0;
        for (const w of p.waves) {
          assert.ok(w.pods.length > 0);
          assert.ok(w.index > lastIndex);
          lastIndex = w.index;
          reached += w.pods.length;
          assert.equal(w.target, t[w.index - 1]);
          assert.ok(reached >= w.target, `after wave ${w.index}: ${reached} < ${w.target}`);
        }
        for (const i of p.satisfied) assert.ok(done >= (t[i - 1] as number));
        assert.equal(p.waves.length + p.satisfied.length, p.waveCount);
      }),
    );
  });

  test('property: targets are non-decreasing, within the selection, strictly rising', () => {
    fc.assert(
      fc.property(arbSpec, fc.integer({ min: 0, max: 500 }), (spec, selected) => {
        const t = resolveTargets(spec, selected);
        t.forEach((x, i) => {
          assert.ok(x >= 1 && x <= selected);
          if (i > 0) assert.ok(x > (t[i - 1] as number));
        });
        // Equal waves and a last target of 100% always reach every pod.
        const full =
          spec.kind === 'size' || (spec.targets.at(-1)?.kind === 'fraction' && spec.targets.at(-1)?.value === 1);
        if (full && selected > 0) assert.equal(t.at(-1), selected);
      }),
    );
  });

  // Worked out by hand from the targets (resolveTargets' table above), not by calling partitionWaves.
  const partitions: {
    name: string;
    todo: number;
    done: number;
    spec: WaveSpec;
    waves: [number, number][];
    satisfied: number[];
    deferred: number;
    waveCount: number;
  }[] = [
    {
      name: '12 pods in waves of 5: 5, 5, 2',
      todo: 12,
      done: 0,
      spec: size(n(5)),
      waves: [
        [1, 5],
        [2, 5],
        [3, 2],
      ],
      satisfied: [],
      deferred: 0,
      waveCount: 3,
    },
    {
      name: '10 selected, 3 done, canary [1, 2, 5, 10]: waves 1-2 satisfied, then 2 and 5',
      todo: 7,
      done: 3,
      spec: canary,
      waves: [
        [3, 2],
        [4, 5],
      ],
      satisfied: [1, 2],
      deferred: 0,
      waveCount: 4,
    },
    {
      name: '4 pods, [50%, 20%, 100%] → targets 2, 3, 4: 2, 1, 1',
      todo: 4,
      done: 0,
      spec: targets(pct(50), pct(20), pct(100)),
      waves: [
        [1, 2],
        [2, 1],
        [3, 1],
      ],
      satisfied: [],
      deferred: 0,
      waveCount: 3,
    },
    {
      name: '20 pods, [1, 25%] → targets 1, 5: 1, 4 and 15 deferred',
      todo: 20,
      done: 0,
      spec: targets(n(1), pct(25)),
      waves: [
        [1, 1],
        [2, 4],
      ],
      satisfied: [],
      deferred: 15,
      waveCount: 2,
    },
    {
      name: '10 selected, 5 done, waves of 20% → targets 2, 4, 6, 8, 10: 1, 2, 2',
      todo: 5,
      done: 5,
      spec: size(pct(20)),
      waves: [
        [3, 1],
        [4, 2],
        [5, 2],
      ],
      satisfied: [1, 2],
      deferred: 0,
      waveCount: 5,
    },
    {
      name: '3 pods, canary → targets 1, 2, 3 (100% adds nothing): 1, 1, 1',
      todo: 3,
      done: 0,
      spec: canary,
      waves: [
        [1, 1],
        [2, 1],
        [3, 1],
      ],
      satisfied: [],
      deferred: 0,
      waveCount: 3,
    },
    {
      name: 'nothing selected: no waves',
      todo: 0,
      done: 0,
      spec: canary,
      waves: [],
      satisfied: [],
      deferred: 0,
      waveCount: 0,
    },
  ];
  for (const r of partitions) {
    test(`table: ${r.name}`, () => {
      const p = partitionWaves(pods(r.todo), r.done, r.spec);
      assert.deepEqual(
        p.waves.map((w) => [w.index, w.pods.length]),
        r.waves,
      );
      assert.deepEqual(p.satisfied, r.satisfied);
      assert.equal(p.deferred.length, r.deferred);
      assert.equal(p.waveCount, r.waveCount);
      assert.equal(p.selected, r.todo + r.done);
    });
  }
});
