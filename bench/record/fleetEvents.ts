// The events of a large rollout with every gate kind, for measuring (bench/record-size.ts) and
// testing (test/unit/record/bounds.test.ts) the size of its record: `pods` pods in waves of
// `waveSize`, `concurrency` in flight at once, one pod in `failEvery` failing with a long message,
// and after every wave a pause, an approval, a webhook and two Prometheus gates (a scalar, and a
// vector of one value per pod) measured `measurements` times each. Pure; events come as a stream.
import type { RolloutEvent, RolloutEventBody } from '../../src/rollout/events.js';

export interface FleetShape {
  pods: number;
  waveSize: number;
  concurrency: number;
  failEvery: number;
  measurements: number;
}

const T0 = Date.parse('2026-12-06T08:00:00.000Z');
const LONG = 'x'.repeat(4000);

/**
 * The events in order; `at(n)` marks the point after the n-th pod started in the last wave, for
 * a record caught mid-wave with `concurrency` pods in flight.
 */
export function* fleetEvents(shape: FleetShape): Generator<RolloutEvent> {
  let tick = 0;
  const ev = (body: RolloutEventBody): RolloutEvent =>
    ({ ...body, plan: 'web', time: new Date(T0 + tick++ * 10).toISOString() }) as RolloutEvent;
  const waves = Math.ceil(shape.pods / shape.waveSize);
  const vector = Array.from({ length: shape.pods }, (_, i) => i / shape.pods);
  yield ev({
    event: 'rollout-start',
    revision: 'r1',
    direction: 'upgrade',
    selected: shape.pods,
    alreadyDone: 0,
    waves,
    deferred: 0,
    budget: shape.concurrency,
    concurrency: shape.concurrency,
    resumed: false,
  });
  for (let wave = 1; wave <= waves; wave++) {
    const first = (wave - 1) * shape.waveSize;
    const last = Math.min(first + shape.waveSize, shape.pods);
    yield ev({ event: 'wave-start', wave, waves, pods: last - first, target: last });
    let failed = 0;
    for (let start = first; start < last; start += shape.concurrency) {
      const batch = Array.from({ length: Math.min(shape.concurrency, last - start) }, (_, i) => start + i);
      for (const i of batch) yield ev({ event: 'pod-start', wave, pod: `web/pod-with-a-rather-long-name-${i}` });
      for (const i of batch)
        yield ev({
          event: 'pod-step',
          wave,
          pod: `web/pod-with-a-rather-long-name-${i}`,
          step: 'image-patched',
          message: '',
        });
      for (const i of batch) {
        const fails = i % shape.failEvery === 0;
        if (fails) failed++;
        yield ev({
          event: 'pod-end',
          wave,
          pod: `web/pod-with-a-rather-long-name-${i}`,
          result: fails ? 'failed' : 'upgraded',
          ...(fails ? { reason: `ErrImagePull${LONG}` } : {}),
          message: fails ? `Failed to pull image: ${LONG}` : '',
          durationMs: 500,
        });
      }
    }
    const summary = {
      wave,
      pods: last - first,
      upgraded: last - first - failed,
      failed,
      vanished: 0,
      durationMs: 1000,
    };
    yield ev({ event: 'wave-end', wave, summary });
    if (wave === waves) break;
    yield ev({ event: 'gate-start', wave, gate: 'soak' });
    yield ev({ event: 'gate-pause', wave, gate: 'soak', msLeft: 60_000 });
    yield ev({ event: 'gate-end', wave, gate: 'soak', result: 'passed', message: 'paused 1m' });
    yield ev({ event: 'gate-start', wave, gate: 'sign-off' });
    yield ev({ event: 'gate-approval-wait', wave, gate: 'sign-off' });
    yield ev({ event: 'gate-end', wave, gate: 'sign-off', result: 'passed', message: `approved by ${LONG}` });
    yield ev({ event: 'gate-start', wave, gate: 'ticket' });
    yield ev({ event: 'gate-end', wave, gate: 'ticket', result: 'passed', message: `webhook said: ${LONG}` });
    for (const [gate, value] of [
      ['error-rate', 0.01],
      ['per-pod-latency', vector],
    ] as const) {
      yield ev({ event: 'gate-start', wave, gate });
      for (let index = 1; index <= shape.measurements; index++)
        yield ev({
          event: 'gate-measurement',
          wave,
          gate,
          index,
          count: shape.measurements,
          value,
          phase: 'successful',
          message: `result ${LONG}`,
        });
      yield ev({
        event: 'gate-end',
        wave,
        gate,
        result: 'passed',
        message: `${shape.measurements} measurements passed`,
      });
    }
  }
  yield ev({ event: 'rollout-end', phase: 'Completed', exitCode: 0, message: LONG, waves: [], durationMs: 1 });
}
