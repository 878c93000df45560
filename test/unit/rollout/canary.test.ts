// A wave is done only when its count of pods is at the target (issue 31): a gate after a wave
// judges pods that reached the target in it. Counted on the fake fleet itself when each gate
// starts, not from kwave's events. Pods web-i sit on node n(i % nodes); order `name`, so web-0
// is the canary of waves [1, "100%"].
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gate } from '../../../src/plan/types.js';
import { isAtTarget } from '../../../src/inplace/atTarget.js';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import type { GateVerdict } from '../../../src/rollout/gateCheck.js';
import { runRollout, type RunnerDeps, type RunResult } from '../../../src/rollout/runner.js';
import { fleet, fleetDeps, fleetNodes } from './fakeFleet.js';
import { loadPlan, planText } from '../helpers/plans.js';

const GATE_AFTER_1 = '  gates: [{ name: canary-check, pause: 0s, afterWaves: [1] }]\n';

function plan(strategy: string, failurePolicy = '{ maxFailed: 0, rollback: none }', extra = GATE_AFTER_1) {
  return loadPlan(planText({ name: 'p', strategy, failurePolicy, extra }));
}

/** A run over `f` whose gate checks record how many pods were at target on the fleet when each began. */
async function gatedRun(
  f: ReturnType<typeof fleet>,
  p: ReturnType<typeof plan>,
  extra: Partial<RunnerDeps> = {},
): Promise<{ r: RunResult | 'deadlock'; events: RolloutEvent[]; gates: { wave: number; atTarget: number }[] }> {
  const events: RolloutEvent[] = [];
  const gates: { wave: number; atTarget: number }[] = [];
  const checkGate = async (gate: Gate, hooks: { wave: number }): Promise<GateVerdict> => {
    gates.push({ wave: hooks.wave, atTarget: [...f.pods.values()].filter((q) => isAtTarget(q, p)).length });
    return { result: 'passed', message: `${gate.name}: passed` };
  };
  const bound = new Promise<'deadlock'>((resolve) => setTimeout(() => resolve('deadlock'), 20_000).unref());
  const r = await Promise.race([runRollout(p, { ...fleetDeps(f, events), checkGate, ...extra }), bound]);
  return { r, events, gates };
}

const starts = (events: RolloutEvent[], wave?: number) =>
  events
    .filter((e) => e.event === 'pod-start' && (wave === undefined || e.wave === wave))
    .map((e) => 'pod' in e && e.pod);

describe('a wave is done only when its count of pods is at the target', () => {
  test("the canary's node NotReady: another pod stands in, the gate judges one upgraded pod; Partial, exit 5", async () => {
    const f = fleet(6);
    const n = fleetNodes(f, 3);
    n.down('n0');
    const { r, events, gates } = await gatedRun(f, plan('{ waves: [1, "100%"], concurrency: 2, maxUnavailable: 2 }'), {
      nodes: n.view,
    });
    assert.notEqual(r, 'deadlock');
    if (r === 'deadlock') return;
    assert.deepEqual(gates, [{ wave: 1, atTarget: 1 }], 'the gate judged a canary that reached the target');
    assert.deepEqual(starts(events, 1), ['web/web-1'], 'web-1 stands in for web-0');
    const wave1 = r.waves.find((w) => w.wave === 1);
    assert.equal(wave1?.upgraded, 1);
    assert.equal(r.phase, 'Partial', r.message);
    assert.equal(r.exitCode, 5);
    assert.match(r.message, /web\/web-0 \(node n0 is NotReady/);
    assert.match(r.message, /web\/web-3 \(node n0 is NotReady/);
    assert.ok(!f.writes.some((w) => /web-[03]$/.test(w)), f.writes.join(', '));
  });

  test('no pod of the canary wave can act: the run ends Partial (exit 5) before the gate, saying why', async () => {
    const f = fleet(2);
    const n = fleetNodes(f, 2);
    n.down('n0');
    n.down('n1');
    const { r, events, gates } = await gatedRun(f, plan('{ waves: [1, "100%"], concurrency: 2, maxUnavailable: 2 }'), {
      nodes: n.view,
    });
    assert.notEqual(r, 'deadlock');
    if (r === 'deadlock') return;
    assert.deepEqual(gates, [], 'no gate on a canary that never happened');
    assert.ok(!events.some((e) => e.event === 'gate-start'));
    assert.ok(!events.some((e) => e.event === 'wave-start' && e.wave === 2), 'wave 2 never starts');
    assert.equal(r.phase, 'Partial', r.message);
    assert.equal(r.exitCode, 5);
    assert.match(
      r.message,
      /wave 1 reached 0 of its 1 pod at target and has no pod left to take .*the gates after it were not run/,
    );
    const end = events.find((e) => e.event === 'rollout-end');
    assert.ok(end && end.event === 'rollout-end' && /wave 1 reached 0 of its 1 pod/.test(end.message));
  });

  test('the budget held by two pods of a NotReady node, none in flight: Partial (exit 5) instead of waiting for ever', async () => {
    // web-1 and web-4 sit on n1, NotReady; the lifecycle controller marked them not Ready, so they
    // hold the whole budget of 2 before any pod starts. Nothing in this run frees it.
    const f = fleet(6);
    const n = fleetNodes(f, 3);
    n.down('n1', { podsNotReady: true });
    const { r, events, gates } = await gatedRun(f, plan('{ waves: [1, "100%"], concurrency: 2, maxUnavailable: 2 }'), {
      nodes: n.view,
    });
    assert.notEqual(
      r,
      'deadlock',
      `the run waited for the budget for ever: ${JSON.stringify(events.filter((e) => e.event === 'budget-wait'))}`,
    );
    if (r === 'deadlock') return;
    assert.equal(r.phase, 'Partial', r.message);
    assert.equal(r.exitCode, 5);
    assert.deepEqual(gates, []);
    assert.equal(f.writes.length, 0, `nothing written: ${f.writes.join(', ')}`);
    const waiting = events.find((e) => e.event === 'pod-waiting' && e.pod === 'web/web-0');
    assert.ok(waiting && waiting.event === 'pod-waiting', JSON.stringify(events));
    assert.match(
      waiting.message,
      /^the unavailability budget of 2 is held by web\/web-1, left for its node: node n1 is NotReady/,
    );
  });

  test('a pod lost mid-flight keeps its wave open: the gate waits for it once its node is back', async () => {
    // web-0's node stops acting as its gate closes; web-1 stands in; n0 is back when web-1 ends,
    // and web-0's flow goes on. The gate after wave 1 starts only once web-0 has ended.
    const f = fleet(3);
    const n = fleetNodes(f, 3);
    const events: RolloutEvent[] = [];
    const d = fleetDeps(f, events);
    d.sink = (e) => {
      events.push(e);
      if (e.event === 'pod-step' && e.pod === 'web/web-0' && e.step === 'close-gate') n.down('n0');
      if (e.event === 'pod-end' && e.pod === 'web/web-1') n.up('n0');
    };
    const { r, gates } = await gatedRun(f, plan('{ waves: [1, "100%"], concurrency: 1, maxUnavailable: 2 }'), {
      ...d,
      nodes: n.view,
    });
    assert.notEqual(r, 'deadlock');
    if (r === 'deadlock') return;
    assert.equal(r.phase, 'Completed', r.message);
    const order = events
      .map((e) => (e.event === 'pod-end' ? `end ${e.pod}` : e.event))
      .filter((x) => /end |gate-start/.test(x));
    assert.deepEqual(order.slice(0, 3), ['end web/web-1', 'end web/web-0', 'gate-start']);
    assert.deepEqual(gates, [{ wave: 1, atTarget: 2 }]);
  });

  test('a pod lost mid-flight while another of its wave is in flight: no stand-in yet; back in time, it ends the wave', async () => {
    // A heartbeat late: n0 stops acting as web-0's gate closes and is back when web-1 ends.
    const f = fleet(4);
    const n = fleetNodes(f, 4);
    const events: RolloutEvent[] = [];
    const d = fleetDeps(f, events);
    d.sink = (e) => {
      events.push(e);
      if (e.event === 'pod-step' && e.pod === 'web/web-0' && e.step === 'close-gate') n.down('n0');
      if (e.event === 'pod-end' && e.pod === 'web/web-1') n.up('n0');
    };
    const { r, gates } = await gatedRun(f, plan('{ waves: [2, "100%"], concurrency: 2, maxUnavailable: 2 }'), {
      ...d,
      nodes: n.view,
    });
    assert.notEqual(r, 'deadlock');
    if (r === 'deadlock') return;
    assert.equal(r.phase, 'Completed', r.message);
    assert.deepEqual(
      starts(events, 1),
      ['web/web-0', 'web/web-1'],
      events.map((e) => `${e.event} ${'pod' in e ? e.pod : ''} ${'step' in e ? e.step : ''}`).join('\n'),
    );
    assert.deepEqual(gates, [{ wave: 1, atTarget: 2 }]);
  });

  test('a failed pod within maxFailed: the next pod stands in, the gate judges the count; the last wave ends within maxFailed', async () => {
    const f = fleet(4, { brokenPods: new Set(['web-0']) });
    const { r, events, gates } = await gatedRun(
      f,
      plan('{ waves: [2, "100%"], concurrency: 1, maxUnavailable: 2 }', '{ maxFailed: 1, rollback: none }'),
    );
    assert.notEqual(r, 'deadlock');
    if (r === 'deadlock') return;
    assert.deepEqual(starts(events, 1), ['web/web-0', 'web/web-1', 'web/web-2']);
    assert.deepEqual(gates, [{ wave: 1, atTarget: 2 }]);
    assert.equal(r.phase, 'Completed', r.message);
    assert.match(r.message, /completed: 3 pods upgraded, 1 failed \(within maxFailed\)/);
  });

  test('a wave short only by failures within maxFailed, a gate due after it: halts before the gate', async () => {
    const f = fleet(2, { brokenPods: new Set(['web-0']) });
    const { r, gates } = await gatedRun(
      f,
      plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 2 }', '{ maxFailed: 1, rollback: none }'),
    );
    assert.notEqual(r, 'deadlock');
    if (r === 'deadlock') return;
    assert.deepEqual(gates, []);
    assert.equal(r.phase, 'Halted', r.message);
    assert.equal(r.exitCode, 3);
    assert.match(r.message, /wave 1 reached 1 of its 2 pods at target .*1 failed within maxFailed/);
  });
});
