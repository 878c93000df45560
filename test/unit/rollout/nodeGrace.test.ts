// strategy.nodeGraceSeconds: a node NotReady for less than its grace may be flapping (a late
// heartbeat, a control-plane restart), so the run waits out the rest of the grace before it leaves
// the node's pods — at the end of the run, in a wave left short before a gate, and when such pods
// hold the budget — and goes on in the same run if the node comes back meanwhile.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isAtTarget } from '../../../src/inplace/atTarget.js';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import type { GateVerdict } from '../../../src/rollout/gateCheck.js';
import { runRollout } from '../../../src/rollout/runner.js';
import { fleet, fleetDeps, fleetNodes } from './fakeFleet.js';
import { testPlan } from '../helpers/plans.js';

const plan = (strategy: string, extra?: string) =>
  testPlan({ name: 'p', strategy, failurePolicy: '{ maxFailed: 0, rollback: none }', ...(extra ? { extra } : {}) });

/** A fleet of `pods` on 3 nodes, n1 NotReady since 12 s; `backInGrace`: n1 comes back while the run waits out its grace. */
function setup(pods: number, options: { backInGrace: boolean; podsNotReady?: boolean }) {
  const f = fleet(pods);
  const n = fleetNodes(f, 3);
  n.down('n1', { podsNotReady: options.podsNotReady ?? false });
  const events: RolloutEvent[] = [];
  const d = fleetDeps(f, events);
  const sleeps: number[] = [];
  const sleep = d.sleep;
  d.sleep = async (ms, signal) => {
    sleeps.push(ms);
    if (options.backInGrace) n.up('n1');
    return sleep(ms, signal);
  };
  return { f, events, sleeps, deps: { ...d, nodes: n.view } };
}

describe('strategy.nodeGraceSeconds', () => {
  test('a node back within its grace at the end of the run: its pod is upgraded in the same run, Completed', async () => {
    const s = setup(3, { backInGrace: true });
    const r = await runRollout(plan('{ waves: ["100%"], concurrency: 3, maxUnavailable: 3 }'), s.deps);
    assert.equal(r.phase, 'Completed', r.message);
    assert.ok(
      s.f.writes.some((w) => w.endsWith('web-1')),
      s.f.writes.join(', '),
    );
    // The rest of the default 30 s grace of a node NotReady for 12 s.
    assert.ok(
      s.sleeps.some((ms) => ms > 17_000 && ms <= 18_000),
      `sleeps ${s.sleeps.join(', ')}`,
    );
  });

  test('a node still NotReady when its grace runs out: its pod is left, Partial (exit 5)', async () => {
    const s = setup(3, { backInGrace: false });
    const r = await runRollout(plan('{ waves: ["100%"], concurrency: 3, maxUnavailable: 3 }'), s.deps);
    assert.equal(r.phase, 'Partial');
    assert.equal(r.exitCode, 5);
    assert.ok(!s.f.writes.some((w) => w.endsWith('web-1')), s.f.writes.join(', '));
  });

  test('nodeGraceSeconds: 0: the pod is left at once, with no wait for the node', async () => {
    const s = setup(3, { backInGrace: true });
    const r = await runRollout(
      plan('{ waves: ["100%"], concurrency: 3, maxUnavailable: 3, nodeGraceSeconds: 0 }'),
      s.deps,
    );
    assert.equal(r.phase, 'Partial');
    assert.deepEqual(s.sleeps, []);
  });

  test('a wave left short before its gate waits for the node within its grace: the gate judges the whole count', async () => {
    // Pods web-0..4 on n0, n1, n2, n0, n1; n1 down: wave 1 cannot reach its 4 without web-1 or web-4.
    const s = setup(5, { backInGrace: true });
    const p = plan('{ waves: [4, "100%"], concurrency: 3, maxUnavailable: 3 }', '  gates: [{ name: g, pause: 0s }]\n');
    const judged: number[] = [];
    const checkGate = async (): Promise<GateVerdict> => {
      judged.push([...s.f.pods.values()].filter((q) => isAtTarget(q, p)).length);
      return { result: 'passed', message: 'g: passed' };
    };
    const r = await runRollout(p, { ...s.deps, checkGate });
    assert.equal(r.phase, 'Completed', r.message);
    assert.equal(judged.length, 1);
    assert.ok(judged[0]! >= 4, `the gate judged ${judged[0]} pods at target`);
  });

  test('a runner whose clock is 2 minutes behind the cluster waits no longer than the grace', async () => {
    const s = setup(3, { backInGrace: false });
    const now = s.deps.now!;
    const r = await runRollout(plan('{ waves: ["100%"], concurrency: 3, maxUnavailable: 3 }'), {
      ...s.deps,
      now: () => now() - 120_000,
    });
    assert.equal(r.phase, 'Partial');
    assert.ok(s.sleeps.length > 0 && s.sleeps.every((ms) => ms <= 30_000), `sleeps ${s.sleeps.join(', ')}`);
  });

  test('a budget held by two pods of a node within its grace: the run waits, and goes on once the node is back', async () => {
    // maxUnavailable 2, held by web-1 and web-4 (n1's pods, not Ready with their node).
    const s = setup(6, { backInGrace: true, podsNotReady: true });
    const r = await runRollout(plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 2 }'), s.deps);
    assert.equal(r.phase, 'Completed', r.message);
    assert.equal(r.exitCode, 0);
  });
});
