// The store's incremental folder gives the very record applyEvent gives, event after event:
// random runs of pod starts, steps and ends (repeats and strays included) among wave, halt,
// rollback and node-wait events, checked against a fold of the same events from scratch.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RolloutEvent, RolloutEventBody } from '../../../src/rollout/events.js';
import type { PodResult } from '../../../src/rollout/podEnd.js';
import { newRecord, type RolloutRecord } from '../../../src/record/record.js';
import { applyEvent } from '../../../src/record/reducer.js';
import { RecordFolder } from '../../../src/record/recordFolder.js';
import { seededRandom } from '../../../src/sim/clock.js';

const RESULTS: PodResult[] = ['upgraded', 'failed', 'vanished', 'aborted', 'skipped', 'rolled-back'];

function randomEvent(r: () => number): RolloutEventBody {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const pod = `ns/web-${Math.floor(r() * 8)}`;
  const wave = 1 + Math.floor(r() * 3);
  const roll = r();
  if (roll < 0.25) return { event: 'pod-start', wave, pod };
  if (roll < 0.5)
    return {
      event: 'pod-step',
      wave,
      pod,
      step: pick(['close-gate', 'patch', 'wait-ready', 'open-gate']),
      message: '',
    };
  if (roll < 0.7)
    return {
      event: 'pod-end',
      wave,
      pod,
      result: pick(RESULTS),
      message: 'm',
      durationMs: 5,
      ...(r() < 0.5 ? { reason: 'Timeout' } : {}),
    };
  if (roll < 0.75) return { event: 'wave-start', wave, waves: 3, pods: 4, target: 4 };
  if (roll < 0.8)
    return { event: 'pod-waiting', wave, pod, node: 'n1', direction: 'upgrade', message: 'node n1 is NotReady' };
  if (roll < 0.84) return { event: 'budget-wait', wave, unavailable: 2, budget: 2, holders: [pod] };
  if (roll < 0.87) return { event: 'rollback-start', pods: 3, scope: 'failed' };
  if (roll < 0.9) return { event: 'halt', wave, reason: 'failures', message: 'too many' };
  if (roll < 0.93)
    return {
      event: 'rollout-start',
      revision: 'abc1234567',
      direction: 'upgrade',
      selected: 8,
      alreadyDone: 1,
      waves: 3,
      deferred: 0,
      budget: 2,
      concurrency: 2,
      resumed: r() < 0.5,
    };
  return { event: 'wave-end', wave, summary: { wave, pods: 4, upgraded: 2, failed: 1, vanished: 0 } };
}

describe('RecordFolder', () => {
  test('300 random runs: the folded record equals applyEvent folded from scratch, after every event', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = seededRandom(seed);
      let expected: RolloutRecord = newRecord({
        plan: 'web',
        revision: 'abc1234567',
        planText: 'kind: RolloutPlan\n',
        holder: 'me@host pid 1',
        now: '2025-03-01T10:00:00.000Z',
      });
      const folder = new RecordFolder(expected);
      for (let i = 0; i < 60; i++) {
        const event = {
          time: new Date(Date.UTC(2025, 2, 1, 10, 0, i)).toISOString(),
          plan: 'web',
          ...randomEvent(r),
        } as RolloutEvent;
        expected = applyEvent(expected, event);
        folder.apply(event);
        if (i % 7 === 0 || i === 59)
          assert.deepEqual(folder.record, expected, `seed ${seed}, event ${i} (${event.event})`);
      }
    }
  });

  test('starts from a record with pods in flight, and gives the same object until the next event', () => {
    const base = newRecord({ plan: 'web', revision: 'r', planText: '', holder: 'h', now: '2025-03-01T10:00:00.000Z' });
    const record: RolloutRecord = {
      ...base,
      inFlight: [{ pod: 'ns/a', wave: 1, step: 'patch', since: base.updatedAt, stepAt: base.updatedAt }],
    };
    const folder = new RecordFolder(record);
    assert.equal(folder.record, record);
    folder.apply({
      time: '2025-03-01T10:00:01.000Z',
      plan: 'web',
      event: 'pod-step',
      wave: 1,
      pod: 'ns/a',
      step: 'wait-ready',
      message: '',
    });
    const once = folder.record;
    assert.equal(folder.record, once);
    assert.deepEqual(once.inFlight, [
      { pod: 'ns/a', wave: 1, step: 'wait-ready', since: base.updatedAt, stepAt: '2025-03-01T10:00:01.000Z' },
    ]);
  });
});
