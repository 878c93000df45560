import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { metricsSink } from '../../../src/metrics/fromEvents.js';
import { KwaveMetrics } from '../../../src/metrics/registry.js';
import type { RolloutEventBody } from '../../../src/rollout/events.js';

/** kwave_rollout_pods by state, read from the exposition. */
async function podStates(m: KwaveMetrics): Promise<Record<string, number>> {
  const text = await m.exposition();
  return Object.fromEntries(
    [...text.matchAll(/^kwave_rollout_pods\{plan="p",state="(\w+)"\} (\d+)$/gm)].map((x) => [x[1], Number(x[2])]),
  );
}

/** A sink feeding `m`, taking event bodies. */
function sinkFor(m: KwaveMetrics): (b: RolloutEventBody) => void {
  const sink = metricsSink(m, []);
  return (b) => sink({ time: '2025-01-01T00:00:00Z', plan: 'p', ...b } as Parameters<typeof sink>[0]);
}

const start: RolloutEventBody = {
  event: 'rollout-start',
  revision: 'r',
  direction: 'upgrade',
  selected: 4,
  alreadyDone: 0,
  waves: 2,
  deferred: 0,
  budget: 1,
  concurrency: 1,
  resumed: false,
};
const podEnd = (pod: string, result: 'upgraded' | 'failed' | 'rolled-back'): RolloutEventBody => ({
  event: 'pod-end',
  wave: 1,
  pod,
  result,
  message: '',
  durationMs: 1000,
});

describe('metricsSink: pod states', () => {
  test('a rollback after a halted upgrade puts upgraded pods back to pending; a failed pod stays failed', async () => {
    const m = new KwaveMetrics({ plan: 'p', processMetrics: false });
    const ev = sinkFor(m);
    ev(start);
    ev({ event: 'pod-start', wave: 1, pod: 'ns/a' });
    ev(podEnd('ns/a', 'upgraded'));
    ev({ event: 'pod-start', wave: 1, pod: 'ns/b' });
    ev(podEnd('ns/b', 'failed'));
    assert.deepEqual(await podStates(m), {
      pending: 2,
      in_progress: 0,
      upgraded: 1,
      failed: 1,
      skipped: 0,
      vanished: 0,
    });
    ev({ event: 'rollback-start', pods: 2, scope: 'all' });
    ev(podEnd('ns/a', 'rolled-back'));
    ev(podEnd('ns/b', 'rolled-back'));
    assert.deepEqual(await podStates(m), {
      pending: 3,
      in_progress: 0,
      upgraded: 0,
      failed: 1,
      skipped: 0,
      vanished: 0,
    });
    assert.match(await m.exposition(), /^kwave_pod_rollbacks_total\{plan="p",result="succeeded"\} 2$/m);
  });
});
