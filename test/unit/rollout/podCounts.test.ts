// The one count of pods by state (rollout/podCounts.ts): what each event does to it, its
// invariant (every selected pod in exactly one state, at every event), and that the rollout
// record, the terminal's progress and the kwave_rollout_pods gauge all show that very count.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { advance, initialProgress } from '../../../src/cli/output/progress.js';
import { metricsSink } from '../../../src/metrics/fromEvents.js';
import { KwaveMetrics } from '../../../src/metrics/registry.js';
import { newRecord } from '../../../src/record/record.js';
import { applyEvent } from '../../../src/record/reducer.js';
import type { RolloutEvent, RolloutEventBody } from '../../../src/rollout/events.js';
import {
  countPods,
  initialPodCounts,
  POD_STATES,
  type PodCounts,
  type PodCountState,
} from '../../../src/rollout/podCounts.js';
import type { PodResult } from '../../../src/rollout/podEnd.js';

const at = (body: RolloutEventBody, i = 0): RolloutEvent =>
  ({ time: new Date(Date.UTC(2025, 2, 1, 10, 0, i)).toISOString(), plan: 'p', ...body }) as RolloutEvent;

const fold = (bodies: RolloutEventBody[], from: PodCountState = initialPodCounts()): PodCountState =>
  bodies.reduce((s, b) => countPods(s, at(b)), from);

const start = (over: Partial<Extract<RolloutEventBody, { event: 'rollout-start' }>> = {}): RolloutEventBody => ({
  event: 'rollout-start',
  revision: 'r',
  direction: 'upgrade',
  selected: 10,
  alreadyDone: 0,
  waves: 2,
  deferred: 0,
  budget: 2,
  concurrency: 2,
  resumed: false,
  ...over,
});
const podStart = (pod: string): RolloutEventBody => ({ event: 'pod-start', wave: 1, pod });
const podEnd = (pod: string, result: PodResult): RolloutEventBody => ({
  event: 'pod-end',
  wave: 1,
  pod,
  result,
  message: '',
  durationMs: 1,
});
const counts = (c: Partial<PodCounts>): PodCounts => ({
  pending: 0,
  in_progress: 0,
  upgraded: 0,
  failed: 0,
  skipped: 0,
  vanished: 0,
  ...c,
});
const sum = (c: PodCounts): number => POD_STATES.reduce((n, s) => n + c[s], 0);

describe('countPods', () => {
  test('a first run: the pods already at the target are skipped, the rest pending, deferred ones too', () => {
    assert.deepEqual(fold([start({ alreadyDone: 3, deferred: 2 })]).counts, counts({ pending: 7, skipped: 3 }));
  });

  test('a resumed run: the pods this revision upgraded in an earlier run are upgraded, not skipped', () => {
    const s = fold([start({ alreadyDone: 4, upgradedEarlier: 3, resumed: true })]);
    assert.deepEqual(s.counts, counts({ pending: 6, upgraded: 3, skipped: 1 }));
  });

  test('a pod moves pending → in_progress → its result; refused and foreign are failures, aborted is pending again', () => {
    const ends: [PodResult, keyof PodCounts][] = [
      ['upgraded', 'upgraded'],
      ['failed', 'failed'],
      ['refused', 'failed'],
      ['foreign', 'failed'],
      ['vanished', 'vanished'],
      ['skipped', 'skipped'],
      ['aborted', 'pending'],
    ];
    for (const [result, state] of ends) {
      const started = fold([start({ selected: 1 }), podStart('ns/a')]);
      assert.deepEqual(started.counts, counts({ in_progress: 1 }));
      assert.deepEqual(fold([podEnd('ns/a', result)], started).counts, counts({ [state]: 1 }), result);
    }
  });

  test('events that move no pod leave the state itself', () => {
    const s = fold([start()]);
    for (const b of [
      { event: 'pod-step', wave: 1, pod: 'ns/a', step: 'patch', message: '' },
      { event: 'wave-start', wave: 1, waves: 2, pods: 2, target: 2 },
      { event: 'halt', wave: 1, reason: 'failures', message: 'm' },
    ] as RolloutEventBody[])
      assert.equal(countPods(s, at(b)), s);
  });

  test('a rollback of the failed after a halt leaves the counts as the upgrade left them', () => {
    const halted = fold([start({ selected: 3 }), podStart('ns/a'), podEnd('ns/a', 'failed')]);
    const s = fold(
      [{ event: 'rollback-start', pods: 1, scope: 'failed' }, podStart('ns/a'), podEnd('ns/a', 'rolled-back')],
      halted,
    );
    assert.deepEqual(s.counts, counts({ pending: 2, failed: 1 }));
  });

  test('a rollback of all after a halt puts reverted upgrades back to pending; the failed pod stays failed', () => {
    const halted = fold([
      start({ selected: 4, alreadyDone: 1, upgradedEarlier: 1 }),
      podStart('ns/a'),
      podEnd('ns/a', 'upgraded'),
      podStart('ns/b'),
      podEnd('ns/b', 'failed'),
    ]);
    assert.deepEqual(halted.counts, counts({ pending: 1, upgraded: 2, failed: 1 }));
    const s = fold(
      [
        { event: 'rollback-start', pods: 3, scope: 'all' },
        podStart('ns/a'),
        podEnd('ns/a', 'rolled-back'),
        podEnd('ns/earlier', 'rolled-back'),
        podEnd('ns/b', 'rolled-back'),
      ],
      halted,
    );
    assert.deepEqual(s.counts, counts({ pending: 3, failed: 1 }));
  });

  test('a kwave rollback run: the pods to revert are pending, the others skipped; a revert counts where upgrades go', () => {
    const s = fold([
      start({ direction: 'rollback', selected: 5 }),
      { event: 'rollback-start', pods: 2, scope: 'all' },
      podStart('ns/a'),
      podEnd('ns/a', 'rolled-back'),
      podStart('ns/b'),
    ]);
    assert.deepEqual(s.counts, counts({ upgraded: 1, in_progress: 1, skipped: 3 }));
  });

  test('a --force rollback before the run starts moves nothing; rollout-start sets the counts afresh', () => {
    const s = fold([
      { event: 'rollback-start', pods: 1, scope: 'all', forced: true },
      podStart('ns/x'),
      podEnd('ns/x', 'rolled-back'),
    ]);
    assert.deepEqual(s.counts, counts({}));
    assert.deepEqual(fold([start({ selected: 2 })], s), { counts: counts({ pending: 2 }), direction: 'upgrade' });
  });
});

/** Any event that may move a pod, on a few pods, in any order (strays and repeats included). */
const RESULTS: PodResult[] = [
  'upgraded',
  'rolled-back',
  'failed',
  'vanished',
  'skipped',
  'refused',
  'foreign',
  'aborted',
];
const podArb = fc.constantFrom('ns/a', 'ns/b', 'ns/c', 'ns/d', 'ns/e');
const eventArb: fc.Arbitrary<RolloutEventBody> = fc.oneof(
  { weight: 4, arbitrary: podArb.map(podStart) },
  { weight: 4, arbitrary: fc.tuple(podArb, fc.constantFrom(...RESULTS)).map(([p, r]) => podEnd(p, r)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.nat(6), fc.constantFrom('failed' as const, 'all' as const))
      .map(([pods, scope]) => ({ event: 'rollback-start', pods, scope }) as RolloutEventBody),
  },
  {
    weight: 1,
    arbitrary: fc.constant<RolloutEventBody>({ event: 'pod-step', wave: 1, pod: 'ns/a', step: 'patch', message: '' }),
  },
  { weight: 1, arbitrary: fc.constant<RolloutEventBody>({ event: 'halt', wave: 1, reason: 'gate', message: 'm' }) },
);
const startArb: fc.Arbitrary<RolloutEventBody> = fc
  .record({
    selected: fc.nat(30),
    done: fc.nat(30),
    earlier: fc.nat(30),
    deferred: fc.nat(10),
    direction: fc.constantFrom('upgrade' as const, 'rollback' as const),
  })
  .map(({ selected, done, earlier, deferred, direction }) => {
    const alreadyDone = direction === 'rollback' ? 0 : Math.min(done, selected);
    return start({
      direction,
      selected,
      alreadyDone,
      upgradedEarlier: Math.min(earlier, alreadyDone),
      deferred: Math.min(deferred, selected - alreadyDone),
    });
  });

describe('countPods: invariants', () => {
  test('every selected pod is in exactly one state: the counts sum to the selection at every event, none below zero', () => {
    fc.assert(
      fc.property(startArb, fc.array(eventArb, { maxLength: 60 }), (first, rest) => {
        const selected = (first as { selected: number }).selected;
        let s = countPods(initialPodCounts(), at(first));
        assert.equal(sum(s.counts), selected);
        for (const b of rest) {
          s = countPods(s, at(b));
          assert.equal(sum(s.counts), selected, `after ${b.event}`);
          assert.ok(POD_STATES.every((st) => s.counts[st] >= 0));
        }
      }),
      { numRuns: 300 },
    );
  });

  test('the rollout record, the progress bars and the kwave_rollout_pods gauge show the very same counts', async () => {
    await fc.assert(
      fc.asyncProperty(startArb, fc.array(eventArb, { maxLength: 40 }), async (first, rest) => {
        const events = [first, ...rest].map((b, i) => at(b, i));
        const expected = events.reduce(countPods, initialPodCounts()).counts;
        const record = events.reduce(
          applyEvent,
          newRecord({ plan: 'p', revision: 'r', planText: '', holder: 'h', now: events[0]!.time }),
        );
        assert.deepEqual(record.counts, expected, 'record');
        assert.deepEqual(events.reduce(advance, initialProgress('p')).pods.counts, expected, 'progress');
        const metrics = new KwaveMetrics({ plan: 'p', processMetrics: false });
        const sink = metricsSink(metrics, []);
        for (const e of events) sink(e);
        const text = await metrics.exposition();
        const gauge = Object.fromEntries(
          [...text.matchAll(/^kwave_rollout_pods\{plan="p",state="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
        );
        assert.deepEqual(gauge, { ...expected }, 'gauge');
      }),
      { numRuns: 150 },
    );
  });
});
