// The dashboard's view model: what the page shows of each rollout, from the record ConfigMap (as
// the runner writes it: events folded by the real reducer, encoded by the real codec), the Lease
// and kwave's Events. Pure, so every case is a fold and a look.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import type { RolloutEvent, RolloutEventBody } from '../../../src/rollout/events.js';
import { newRecord, type RolloutRecord } from '../../../src/record/record.js';
import { applyEvent } from '../../../src/record/reducer.js';
import { approvalKey, encodeApproval, recordConfigMap } from '../../../src/record/codec.js';
import { dashboardView, VIEW_LIMITS, type EventObject, type RolloutView } from '../../../src/dashboard/viewModel.js';
import { plottedValue, thresholdOf } from '../../../src/dashboard/gateView.js';
import { planText } from '../helpers/plans.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const NOW = new Date(T0 + 100_000);

const PLAN = planText({
  strategy: '{ waves: [1, "20%", "100%"], concurrency: 2, maxUnavailable: "10%" }',
  extra: `  gates:
    - { name: sign-off, afterWaves: [1], approval: true }
    - name: error-rate
      afterWaves: [2]
      prometheus: { address: "http://prom:9090", query: "q", successCondition: "result < 0.02", failureCondition: "result >= 0.04" }
`,
});

function record(events: RolloutEventBody[], selected = 20): RolloutRecord {
  let r = newRecord({ plan: 'web', revision: 'rev1', planText: PLAN, holder: 'me@host pid 1', now: at(0) });
  const all: RolloutEventBody[] = [
    {
      event: 'rollout-start',
      revision: 'rev1',
      direction: 'upgrade',
      selected,
      alreadyDone: 0,
      waves: 3,
      deferred: 0,
      budget: 2,
      concurrency: 2,
      resumed: false,
    },
    ...events,
  ];
  all.forEach((e, i) => (r = applyEvent(r, { time: at(i + 1), plan: 'web', ...e } as RolloutEvent)));
  return r;
}

const wave1Done: RolloutEventBody[] = [
  { event: 'wave-start', wave: 1, waves: 3, pods: 1, target: 1 },
  { event: 'pod-start', wave: 1, pod: 'web/p0' },
  { event: 'pod-end', wave: 1, pod: 'web/p0', result: 'upgraded', message: '', durationMs: 1 },
  { event: 'wave-end', wave: 1, summary: { wave: 1, pods: 1, upgraded: 1, failed: 0, vanished: 0 } },
  { event: 'gate-start', wave: 1, gate: 'sign-off' },
  { event: 'gate-approval-wait', wave: 1, gate: 'sign-off' },
];

function cm(r: RolloutRecord, extra: Record<string, string> = {}): V1ConfigMap {
  const map = recordConfigMap('web', r);
  return { ...map, data: { ...map.data, ...extra } };
}

function lease(holder: string | undefined, renewedSecondsAgo = 1): V1Lease {
  return {
    metadata: { name: 'kwave-web', namespace: 'web' },
    spec: {
      ...(holder ? { holderIdentity: holder } : {}),
      leaseDurationSeconds: 15,
      renewTime: new Date(NOW.getTime() - renewedSecondsAgo * 1000) as never,
    },
  };
}

function viewOf(configMap: V1ConfigMap, leases: V1Lease[] = [], events: EventObject[] = []): RolloutView {
  const v = dashboardView({ records: [configMap], leases, events, now: NOW });
  assert.equal(v.rollouts.length, 1);
  return v.rollouts[0]!;
}

const bars = (v: RolloutView) =>
  v.waveBars.map((b) => [b.wave, b.pods, b.atTarget, b.inFlight, b.failed, b.left, b.state]);

describe('dashboardView', () => {
  test('waiting for an approval: the canary wave full, the others left; approve, pause and abort offered', () => {
    const v = viewOf(cm(record(wave1Done)), [lease('me@host pid 1')]);
    assert.equal(v.id, 'web/web');
    assert.deepEqual(bars(v), [
      [1, 1, 1, 0, 0, 0, 'done'],
      [2, 3, 0, 0, 0, 3, 'next'],
      [3, 16, 0, 0, 0, 16, 'next'],
    ]);
    assert.deepEqual(v.approval, { wave: 1, gate: 'sign-off', since: at(7) });
    assert.deepEqual(v.waits, ['waiting for approval of wave 1 (gate sign-off)']);
    assert.deepEqual(v.actions, ['approve', 'pause', 'abort']);
    assert.deepEqual(v.budget, { inFlight: 0, concurrency: 2, maxUnavailable: 2 });
    assert.equal(v.lease?.holder, 'me@host pid 1');
  });

  test('a running wave: pods in flight with their step, the longest in its step first; its failures counted', () => {
    const r = record([
      ...wave1Done,
      { event: 'gate-end', wave: 1, gate: 'sign-off', result: 'passed', message: 'approved' },
      { event: 'wave-start', wave: 2, waves: 3, pods: 3, target: 4 },
      { event: 'pod-start', wave: 2, pod: 'web/p1' },
      { event: 'pod-start', wave: 2, pod: 'web/p2' },
      { event: 'pod-step', wave: 2, pod: 'web/p2', step: 'patched', message: '' },
      {
        event: 'pod-end',
        wave: 2,
        pod: 'web/p1',
        result: 'failed',
        reason: 'ErrImagePull',
        message: 'x',
        durationMs: 1,
      },
      { event: 'pod-start', wave: 2, pod: 'web/p3' },
    ]);
    const v = viewOf(cm(r), [lease('me@host pid 1')]);
    assert.deepEqual(bars(v)[1], [2, 3, 0, 2, 1, 0, 'running']);
    assert.deepEqual(
      v.inFlight.pods.map((p) => [p.pod, p.step]),
      [
        ['web/p2', 'patched'],
        ['web/p3', 'started'],
      ],
    );
    assert.equal(v.failures.total, 1);
    assert.deepEqual(v.actions, ['pause', 'abort']);
  });

  test('pods already at the target fill the first waves, as the runner counts them', () => {
    const r = record([{ event: 'wave-start', wave: 3, waves: 3, pods: 15, target: 20 }]);
    const resumed = { ...r, counts: { ...r.counts, pending: 15, skipped: 5 } };
    assert.deepEqual(
      viewOf(cm(resumed)).waveBars.map((b) => [b.atTarget, b.left]),
      [
        [1, 0],
        [3, 0],
        [1, 15],
      ],
    );
  });

  test('a gate: measurements in order, vectors plotted by their largest value, thresholds from the conditions', () => {
    const r = record([
      ...wave1Done,
      { event: 'gate-start', wave: 2, gate: 'error-rate' },
      {
        event: 'gate-measurement',
        wave: 2,
        gate: 'error-rate',
        index: 1,
        count: 3,
        value: 0.01,
        phase: 'successful',
        message: '',
      },
      {
        event: 'gate-measurement',
        wave: 2,
        gate: 'error-rate',
        index: 2,
        count: 3,
        value: [0.02, 0.09],
        phase: 'failed',
        message: '',
      },
    ]);
    const g = viewOf(cm(r)).gates.find((x) => x.gate === 'error-rate')!;
    assert.deepEqual(
      g.measurements.map((m) => m.value),
      [0.01, 0.09],
    );
    assert.deepEqual(g.success, { op: '<', value: 0.02 });
    assert.deepEqual(g.failure, { op: '>=', value: 0.04 });
    assert.equal(g.failureCondition, 'result >= 0.04');
  });

  test('ended with the lease free: no action but pause/resume is offered; a standing pause offers resume', () => {
    const ended = record([
      ...wave1Done,
      {
        event: 'rollout-end',
        phase: 'Halted',
        exitCode: 3,
        message: 'halted',
        waves: [],
        durationMs: 1,
      } as RolloutEventBody,
    ]);
    assert.deepEqual(viewOf(cm(ended), [lease(undefined)]).actions, []);
    const paused = cm(record(wave1Done), {
      'control.json': JSON.stringify({ paused: { action: 'pause', by: 'bob', at: at(9) }, history: [] }),
      [approvalKey(1)]: encodeApproval({ by: 'ann@desk', at: at(8), revision: 'rev1' }),
    });
    const v = viewOf(paused, [lease('me@host pid 1')]);
    assert.deepEqual(v.actions, ['approve', 'resume', 'abort']);
    assert.deepEqual(v.approvals, [{ wave: 1, by: 'ann@desk', at: at(8) }]);
  });

  test('an expired lease holds nothing: no abort', () => {
    const v = viewOf(cm(record(wave1Done)), [lease('me@host pid 1', 60)]);
    assert.equal(v.lease?.expired, true);
    assert.deepEqual(v.actions, ['approve', 'pause']);
  });

  test('a damaged record is shown as such, with no action', () => {
    const v = viewOf({
      metadata: { name: 'kwave-web', namespace: 'web' },
      data: { 'status.json': '{not json' },
    });
    assert.equal(v.problem, 'status.json is not valid JSON');
    assert.equal(v.plan, 'web');
    assert.deepEqual(v.actions, []);
  });

  test("kwave's Events of the record's namespace, the latest last, at most VIEW_LIMITS.events", () => {
    const events: EventObject[] = Array.from({ length: 15 }, (_, i) => ({
      metadata: { namespace: i === 14 ? 'other' : 'web' },
      involvedObject: { kind: 'Pod', name: `p${i}`, namespace: 'web' },
      reason: 'InPlaceRollback',
      message: `m${i}`,
      lastTimestamp: at(100 - i),
    }));
    const v = viewOf(cm(record(wave1Done)), [], events);
    assert.equal(v.events.length, VIEW_LIMITS.events);
    assert.equal(v.events.at(-1)?.message, 'm0');
    assert.equal(v.events[0]?.object, 'pod/p9');
    assert.ok(!v.events.some((e) => e.message === 'm14'));
  });

  test('the view does not grow with the fleet: 50,000 pods make the size of view 50 do', () => {
    const busy = (selected: number) => {
      const r = record(wave1Done, selected);
      const inFlight = Array.from({ length: 1000 }, (_, i) => ({
        pod: `web/p${i}`,
        wave: 1,
        step: 'patched',
        since: at(1),
        stepAt: at(2),
      }));
      return JSON.stringify(viewOf(cm({ ...r, inFlight }), [lease('me@host pid 1')]));
    };
    const small = busy(50).length;
    const large = busy(50_000).length;
    assert.ok(large - small < 200, `${small} → ${large} characters`);
    assert.equal((JSON.parse(busy(50_000)) as RolloutView).inFlight.pods.length, VIEW_LIMITS.inFlight);
  });
});

describe('gate conditions and values', () => {
  test('thresholds of `result OP number` conditions only', () => {
    assert.deepEqual(thresholdOf('result < 0.01'), { op: '<', value: 0.01 });
    assert.deepEqual(thresholdOf('  result>=5e-2 '), { op: '>=', value: 0.05 });
    assert.equal(thresholdOf('result < 0.01 && result > 0'), undefined);
    assert.equal(thresholdOf('all(result, x, x < 1)'), undefined);
    assert.equal(thresholdOf(undefined), undefined);
  });

  test('values: scalars, the largest of a vector, null for none', () => {
    assert.equal(plottedValue(0.5), 0.5);
    assert.equal(plottedValue([1, 3, 2]), 3);
    assert.equal(plottedValue([]), null);
    assert.equal(plottedValue(null), null);
    assert.equal(plottedValue('NaN'), null);
  });
});
