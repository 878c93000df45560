// The runner over an in-memory fleet: a tiny kubelet that closes and opens Ready with the gate
// and fails pulls of nginx:broken. The simulator e2e tests cover the real thing; these pin the
// runner's own decisions where a real cluster would make them slow to reach.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gateMessage } from '../../../src/inplace/decide.js';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import { runRollout, type RunnerDeps, type RunResult } from '../../../src/rollout/runner.js';
import type { Plan } from '../../../src/plan/types.js';
import type { Sleep } from '../../../src/sleep.js';
import { GATE, makePod } from '../inplace/fixtures.js';
import { abortAtFirstPodStart, fleet, fleetDeps, fleetNodes, remote } from './fakeFleet.js';
import { loadPlanText } from '../../../src/plan/load.js';
import { testPlan } from '../helpers/plans.js';
import { ExitCode, KwaveError } from '../../../src/errors.js';
import { holderPodWriter } from '../../../src/session/holderWrites.js';

function plan(strategy: string, failurePolicy = '{ maxFailed: 0, rollback: none }', image = 'nginx:1.25.3') {
  return testPlan({ name: 'p', strategy, failurePolicy, image });
}

const deps = (f: ReturnType<typeof fleet>, events: RolloutEvent[] = []) => fleetDeps(f, events);

/**
 * `runRollout` bounded by 20 s: a run not ended by then hangs (pods waiting for each other), and
 * the test fails showing `shown()` (the last events unless said). The timer keeps nothing alive:
 * a hang with nothing left to wake it fails the test as soon as the event loop empties.
 */
async function runBounded(
  p: Plan,
  d: RunnerDeps,
  events: readonly RolloutEvent[],
  shown: () => unknown = () => events.slice(-5),
): Promise<RunResult> {
  const bound = new Promise<'hang'>((resolve) => setTimeout(() => resolve('hang'), 20_000).unref());
  const r = await Promise.race([runRollout(p, d), bound]);
  if (r === 'hang') assert.fail(`the run hung: ${JSON.stringify(shown())}`);
  return r;
}

/** A sleep that lasts until the run ends: a node's grace never runs out. */
const sleepUntilEnd: Sleep = (_ms, signal) =>
  new Promise((resolve) => signal?.addEventListener('abort', () => resolve(false)));

const budgetWaits = (events: readonly RolloutEvent[]) => () => events.filter((e) => e.event === 'budget-wait');

/** A sink that records every event in `events`, then hands it to `then` (the test's part in the run). */
const recording =
  (events: RolloutEvent[], then: (e: RolloutEvent) => void) =>
  (e: RolloutEvent): void => {
    events.push(e);
    then(e);
  };

/** Every pod of the fleet asks for the plan's target image. */
function assertAllUpgraded(f: ReturnType<typeof fleet>): void {
  for (const pod of f.pods.values()) assert.equal(pod.spec!.containers[0]!.image, 'nginx:1.25.3', pod.metadata!.name);
}

/** The pods started, in order. */
const podStarts = (events: readonly RolloutEvent[]) => events.flatMap((e) => (e.event === 'pod-start' ? [e.pod] : []));

/** `key`'s gate closed by plan `p`'s revision, as a killed run of it leaves a pod it drained. */
function drainedByEarlierRun(f: ReturnType<typeof fleet>, key: string, p: Plan): void {
  f.update(key, (q) => {
    const gate = q.status!.conditions!.find((c) => c.type === GATE)!;
    Object.assign(gate, { status: 'False', reason: 'InPlaceUpdate', message: gateMessage('upgrade', 'p', p.revision) });
  });
}

describe('runRollout', () => {
  test('upgrades every pod with three writes each and never exceeds concurrency or budget', async () => {
    // Counted on the fleet (gates closed, pods not Ready), not from kwave's own events.
    const f = fleet(12);
    const r = await runRollout(plan('{ waves: [1, "50%", "100%"], concurrency: 3, maxUnavailable: 2 }'), deps(f));
    assert.equal(r.phase, 'Completed');
    assert.ok(f.most.gateClosed <= 3, `at most 3 gates closed at once (concurrency), saw ${f.most.gateClosed}`);
    assert.ok(f.most.notReady <= 2, `at most 2 pods not Ready at once (maxUnavailable), saw ${f.most.notReady}`);
    assert.equal(f.most.notReady, 2, 'the budget was used to the full (so the bound above could have been broken)');
    assert.equal(f.writes.length, 36);
    assert.deepEqual(
      r.waves.map((w) => w.pods),
      [1, 5, 6],
    );
  });

  test('an unexpected API error in one flow fails the run, and no pod starts after it', async () => {
    const f = fleet(6, { forbidStatusFor: 'web-0' });
    const events: RolloutEvent[] = [];
    await assert.rejects(
      runRollout(plan('{ waves: ["100%"], concurrency: 2, maxUnavailable: 6 }'), deps(f, events)),
      /forbidden/,
    );
    const started = podStarts(events);
    assert.ok(started.length <= 2, `only the first two had started: ${started.join(', ')}`);
    // Wait for the other started flow to end (a finished flow is what would free a slot for the
    // next pod), then for the turn of the event loop in which a new flow would make its first write.
    const others = started.filter((p) => !p.endsWith('web-0'));
    const deadline = Date.now() + 10_000;
    while (
      !others.every((p) => events.some((e) => e.event === 'pod-end' && (e as { pod: string }).pod === p)) &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 5));
    assert.ok(
      others.every((p) => events.some((e) => e.event === 'pod-end' && (e as { pod: string }).pod === p)),
      `the other started flows ended: ${JSON.stringify(events.map((e) => e.event))}`,
    );
    await new Promise((r) => setImmediate(r));
    assert.ok(
      !f.writes.some((w) => /web-[2-5]/.test(w)),
      `nothing written to pods that had not started: ${f.writes.join(', ')}`,
    );
    assert.ok(
      !events.some((e) => e.event === 'pod-start' && !started.includes((e as { pod: string }).pod)),
      'no pod started after the error',
    );
  });

  test('tolerated failures that hold the whole budget halt the run instead of waiting forever', async () => {
    const f = fleet(4);
    const r = await runRollout(
      plan(
        '{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }',
        '{ maxFailed: 1, rollback: none }',
        'nginx:broken',
      ),
      deps(f),
    );
    assert.equal(r.phase, 'Halted');
    assert.equal(r.exitCode, 3);
    assert.match(r.message, /budget of 1 is held by pods that failed \(web\/web-0\)/);
  });

  test('a halt with rollback: failed reopens the failed pod on its old image', async () => {
    const f = fleet(3);
    const r = await runRollout(
      plan(
        '{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }',
        '{ maxFailed: 0, rollback: failed }',
        'nginx:broken',
      ),
      deps(f),
    );
    assert.equal(r.phase, 'Halted');
    assert.match(r.message, /rolled back the failed pods/);
    const p = f.pods.get('web/web-0')!;
    assert.equal(p.spec!.containers[0]!.image, 'nginx:1.14.2');
    assert.equal(p.status!.conditions!.find((c) => c.type === GATE)!.status, 'True');
  });

  test("the lease lost as a halt's rollback starts: no pod is written after it, exit 4 (Paused), the halt left to the next holder", async () => {
    const f = fleet(3);
    const events: RolloutEvent[] = [];
    const lostLease = new AbortController();
    const why = 'lost the lease web/kwave-p: another runner took it over';
    // The shell's wiring (session/clusterRecord.ts): pod writes wait for the lease, the abort's reason names the loss.
    const lock = { confirmed: async () => !lostLease.signal.aborted, lost: undefined as string | undefined };
    const sink = (e: RolloutEvent) => {
      events.push(e);
      if (e.event === 'rollback-start') {
        lock.lost = why;
        lostLease.abort(new KwaveError('LEASE_LOST', why, ExitCode.INTERRUPTED));
      }
    };
    const writesBefore: string[] = [];
    const r = await runRollout(
      plan(
        '{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }',
        '{ maxFailed: 0, rollback: failed }',
        'nginx:broken',
      ),
      {
        ...deps(f),
        writer: holderPodWriter(f.writer, lock),
        sink: (e) => (e.event === 'rollback-start' && writesBefore.push(...f.writes), sink(e)),
        abort: lostLease.signal,
      },
    );
    assert.equal(r.exitCode, 4);
    assert.equal(r.phase, 'Paused');
    assert.equal(r.message, `interrupted: ${why}; no pod was written after that; run the same plan again to resume`);
    assert.deepEqual(f.writes, writesBefore, 'no write after the loss');
    assert.equal(
      f.pods.get('web/web-0')!.spec!.containers[0]!.image,
      'nginx:broken',
      'the failed pod is left for the next holder',
    );
    const end = events.find((e) => e.event === 'rollout-end');
    assert.equal(end && 'exitCode' in end ? end.exitCode : undefined, 4, 'rollout-end says the same');
  });
});

describe('runRollout with a PodDisruptionBudget', () => {
  test('maxUnavailable 1 holds a plan with maxUnavailable 5 to one pod not Ready at a time, and says which PDB holds it', async () => {
    const f = fleet(10);
    const events: RolloutEvent[] = [];
    const pdb = {
      metadata: { name: 'web-pdb', namespace: 'web', generation: 1 },
      spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 },
    };
    const disruptionBudgets = { pdbs: () => [pdb], pods: () => f.view.list(), onChange: () => () => undefined };
    const r = await runRollout(plan('{ waves: ["100%"], concurrency: 5, maxUnavailable: 5 }'), {
      ...deps(f, events),
      disruptionBudgets,
    });
    assert.equal(r.phase, 'Completed');
    assert.equal(f.most.notReady, 1, `at most one pod not Ready at once, counted on the fleet; saw ${f.most.notReady}`);
    const held = events.filter((e) => e.event === 'pdb-wait');
    assert.ok(held.length > 0 && held.every((e) => e.event === 'pdb-wait' && e.pdb === 'web/web-pdb'));
  });

  test("respectPodDisruptionBudgets: false (no view given) lets the plan's own budget decide", async () => {
    const f = fleet(10);
    await runRollout(plan('{ waves: ["100%"], concurrency: 5, maxUnavailable: 5 }'), deps(f));
    assert.ok(f.most.notReady > 1, `saw ${f.most.notReady}`);
  });
});

describe('runRollout with a node that cannot act', () => {
  test('its pod is never touched, the others are upgraded; Partial, exit 5, the pod listed', async () => {
    const f = fleet(3);
    const n = fleetNodes(f, 3);
    n.down('n1');
    const events: RolloutEvent[] = [];
    const r = await runRollout(plan('{ waves: ["100%"], concurrency: 3, maxUnavailable: 3 }'), {
      ...deps(f, events),
      nodes: n.view,
    });
    assert.equal(r.phase, 'Partial');
    assert.equal(r.exitCode, 5);
    // Left once its node's grace (30 s from its NotReady, 12 s before the run) ran out.
    assert.match(r.message, /web\/web-1 \(node n1 is NotReady since 30s\)/);
    assert.ok(!f.writes.some((w) => w.endsWith('web-1')), f.writes.join(', '));
    assert.deepEqual(
      events
        .filter((e) => e.event === 'pod-end')
        .map((e) => (e as { pod: string }).pod)
        .sort(),
      ['web/web-0', 'web/web-2'],
    );
    const end = events.find((e) => e.event === 'rollout-end');
    assert.deepEqual(end && end.event === 'rollout-end' ? end.waitingForNodes?.map((w) => [w.pod, w.node]) : [], [
      ['web/web-1', 'n1'],
    ]);
  });

  test('it starts once its node is back, even with every concurrency slot of its wave taken meanwhile', async () => {
    const f = fleet(4);
    const n = fleetNodes(f, 2);
    n.down('n0');
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    d.sink = recording(events, (e) => {
      if (e.event === 'pod-end' && e.pod === 'web/web-3') n.up('n0');
    });
    const r = await runRollout(plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 3 }'), { ...d, nodes: n.view });
    assert.equal(r.phase, 'Completed', r.message);
    const order = podStarts(events);
    assert.deepEqual(order.slice(0, 2), ['web/web-1', 'web/web-3'], 'the healthy node first');
    assert.deepEqual(order.slice(2).sort(), ['web/web-0', 'web/web-2']);
    assert.deepEqual(
      events
        .filter((e) => e.event === 'pod-waiting')
        .map((e) => (e as { pod: string }).pod)
        .sort(),
      ['web/web-0', 'web/web-2'],
    );
  });

  /** Two pods on nodes n0 and n1; n0 stops acting as web-0's gate closes. */
  const losingN0AsWeb0Closes = () => {
    const f = fleet(2);
    const n = fleetNodes(f, 2);
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    d.sink = recording(events, (e) => {
      if (e.event === 'pod-step' && e.pod === 'web/web-0' && e.step === 'close-gate') n.down('n0');
    });
    return { f, n, events, d };
  };

  test('lost mid-flight: NodeNotReady, not counted toward maxFailed 0, no halt; Partial, exit 5', async () => {
    const { f, n, events, d } = losingN0AsWeb0Closes();
    const r = await runRollout(
      plan('{ waves: ["100%"], concurrency: 2, maxUnavailable: 2 }', '{ maxFailed: 0, rollback: failed }'),
      { ...d, nodes: n.view },
    );
    assert.equal(r.phase, 'Partial', r.message);
    assert.equal(r.exitCode, 5);
    assert.ok(!events.some((e) => e.event === 'halt'));
    const end0 = events.find((e) => e.event === 'pod-end' && e.pod === 'web/web-0');
    assert.ok(end0 && end0.event === 'pod-end');
    assert.equal(end0.reason, 'NodeNotReady');
    assert.match(
      end0.message,
      /^node n0 is NotReady since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(Ready=Unknown \(NodeStatusUnknown\)\); left as it stands/,
    );
    assert.ok(!f.writes.includes('patch web-0'), 'no patch after the node was lost');
  });

  test('lost mid-flight, its node back while the run still has work: it waits apart (wait-node), holding no slot, then its flow goes on; Completed', async () => {
    const { f, n, events, d } = losingN0AsWeb0Closes();
    const sink = d.sink;
    d.sink = (e) => {
      sink(e);
      // web-1 could start only because web-0 gave up its one slot while it waited.
      if (e.event === 'pod-end' && e.pod === 'web/web-1') n.up('n0');
    };
    const r = await runRollout(
      plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 2 }', '{ maxFailed: 0, rollback: failed }'),
      { ...d, nodes: n.view },
    );
    assert.equal(r.phase, 'Completed', r.message);
    assert.equal(r.exitCode, 0);
    const of0 = (kind: string) => events.filter((e) => e.event === kind && 'pod' in e && e.pod === 'web/web-0');
    assert.equal(of0('pod-start').length, 1, 'one start: the flow went on');
    assert.ok(
      of0('pod-step').some(
        (e) => e.event === 'pod-step' && e.step === 'wait-node' && /^node n0 is NotReady/.test(e.message),
      ),
      JSON.stringify(of0('pod-step')),
    );
    const ends = events.filter((e) => e.event === 'pod-end').map((e) => e.event === 'pod-end' && [e.pod, e.result]);
    assert.deepEqual(ends, [
      ['web/web-1', 'upgraded'],
      ['web/web-0', 'upgraded'],
    ]);
    assert.equal(f.writes.filter((w) => w === 'patch web-0').length, 1, f.writes.join(', '));
  });

  test('lost mid-flight while another pod waits for its own node, that node back first: the drained pod resumes ahead of the waiting one, whose start its unavailability holds back; Completed', async () => {
    // Concurrency 1, budget 1. web-1 waits for n1 from the start; web-0 is lost on n0 once
    // patched (drained: it holds the budget). n1 comes back first: web-1 may start only once
    // web-0 is Ready again, so web-0's resumed flow must not queue behind web-1's start.
    const f = fleet(3);
    const n = fleetNodes(f, 3);
    n.down('n1');
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    // The nodes' grace never runs out here: they are back well within it.
    d.sleep = sleepUntilEnd;
    d.sink = recording(events, (e) => {
      if (e.event === 'pod-step' && e.pod === 'web/web-0' && e.step === 'wait-complete') n.down('n0');
      if (e.event === 'pod-step' && e.pod === 'web/web-0' && e.step === 'wait-node') {
        n.up('n1');
        setTimeout(() => n.up('n0'), 20);
      }
    });
    const r = await runBounded(
      plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }', '{ maxFailed: 0, rollback: failed }'),
      {
        ...d,
        nodes: n.view,
      },
      events,
    );
    assert.equal(r.phase, 'Completed', r.message);
    const ends = events.filter((e) => e.event === 'pod-end').map((e) => e.event === 'pod-end' && [e.pod, e.result]);
    assert.deepEqual(ends.sort(), [
      ['web/web-0', 'upgraded'],
      ['web/web-1', 'upgraded'],
      ['web/web-2', 'upgraded'],
    ]);
  });

  test('lost mid-flight, then deleted while it waits for its node (the pod GC of a deleted node): vanished, the run does not wait for it; Completed', async () => {
    const f = fleet(3);
    const n = fleetNodes(f, 3);
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    d.sink = recording(events, (e) => {
      if (e.event === 'pod-step' && e.pod === 'web/web-0' && e.step === 'close-gate') n.down('n0');
      if (e.event === 'pod-end' && e.pod === 'web/web-1') f.remove('web/web-0');
    });
    const r = await runBounded(
      plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 2 }', '{ maxFailed: 0, rollback: failed }'),
      {
        ...d,
        nodes: n.view,
      },
      events,
    );
    assert.equal(r.phase, 'Completed', r.message);
    assert.equal(r.exitCode, 0);
    const ends = events.filter((e) => e.event === 'pod-end').map((e) => e.event === 'pod-end' && [e.pod, e.result]);
    assert.deepEqual(ends.sort(), [
      ['web/web-0', 'vanished'],
      ['web/web-1', 'upgraded'],
      ['web/web-2', 'upgraded'],
    ]);
    assert.ok(!f.writes.includes('patch web-0'), 'never patched: its node was lost before');
  });

  test('a budget held only by a pod left for its node: the others wait for that node too, and the run ends Partial instead of waiting for ever', async () => {
    // web-0 is left drained on n0 (NodeNotReady) and holds the whole budget of 1; nothing in this
    // run will bring it back, so web-1 (its node fine) is left for the next run as well. Seen on
    // the real control plane: kube-apiserver down past the node grace period (rollout-lease-doubt).
    const { n, events, d } = losingN0AsWeb0Closes();
    const r = await runBounded(
      plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }', '{ maxFailed: 0, rollback: failed }'),
      {
        ...d,
        nodes: n.view,
      },
      events,
      budgetWaits(events),
    );
    assert.equal(r.phase, 'Partial', r.message);
    assert.equal(r.exitCode, 5);
    assert.ok(!events.some((e) => e.event === 'halt'), 'not a halt: no image failed');
    const rollbackStart = events.findIndex((e) => e.event === 'rollback-start');
    assert.ok(
      !events.slice(0, rollbackStart).some((e) => e.event === 'pod-start' && e.pod === 'web/web-1'),
      'web-1 never started its upgrade',
    );
    const waiting = events.find((e) => e.event === 'pod-waiting' && e.pod === 'web/web-1');
    assert.ok(waiting && waiting.event === 'pod-waiting', JSON.stringify(events));
    assert.equal(waiting.node, 'n0', "it waits for web-0's node");
    assert.match(
      waiting.message,
      /^the unavailability budget of 1 is held by web\/web-0, left for its node: node n0 is NotReady since \d+s$/,
    );
    const end = events.find((e) => e.event === 'rollout-end');
    assert.deepEqual(
      end && end.event === 'rollout-end' ? end.waitingForNodes?.map((w) => [w.pod, w.node]).sort() : [],
      [
        ['web/web-0', 'n0'],
        ['web/web-1', 'n0'],
      ],
    );
  });

  test('a budget held by a pod parked for its node (the lifecycle controller marked it not Ready): the others are left for that node, not waited for ever', async () => {
    const f = fleet(3);
    const n = fleetNodes(f, 3);
    n.down('n0');
    f.pods.get('web/web-0')!.status!.conditions!.find((c) => c.type === 'Ready')!.status = 'False';
    const events: RolloutEvent[] = [];
    const r = await runBounded(
      plan('{ waves: ["100%"], concurrency: 3, maxUnavailable: 1 }'),
      { ...deps(f, events), nodes: n.view },
      events,
      budgetWaits(events),
    );
    assert.equal(r.phase, 'Partial', r.message);
    assert.equal(r.exitCode, 5);
    assert.equal(f.writes.length, 0, `nothing written: ${f.writes.join(', ')}`);
    const end = events.find((e) => e.event === 'rollout-end');
    assert.deepEqual(
      end && end.event === 'rollout-end' ? end.waitingForNodes?.map((w) => [w.pod, w.node]).sort() : [],
      [
        ['web/web-0', 'n0'],
        ['web/web-1', 'n0'],
        ['web/web-2', 'n0'],
      ],
    );
  });

  test("a node that flaps mid-flight (down, then back before the flow has stopped): the flow goes on from the pod's state; Completed", async () => {
    const f = fleet(2);
    const n = fleetNodes(f, 2);
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    let flapped = false;
    d.sink = recording(events, (e) => {
      if (!flapped && e.event === 'pod-step' && e.pod === 'web/web-0' && e.step === 'wait-complete') {
        flapped = true;
        n.down('n0');
        n.up('n0');
      }
    });
    const r = await runRollout(plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }'), { ...d, nodes: n.view });
    assert.equal(r.phase, 'Completed', r.message);
    assert.ok(flapped);
    const ends = events.filter((e) => e.event === 'pod-end').map((e) => e.event === 'pod-end' && [e.pod, e.result]);
    assert.deepEqual(ends, [
      ['web/web-0', 'upgraded'],
      ['web/web-1', 'upgraded'],
    ]);
    assert.equal(f.writes.filter((w) => w === 'patch web-0').length, 1, `one image patch: ${f.writes.join(', ')}`);
    for (const pod of f.pods.values())
      assert.equal(
        pod.status!.conditions!.find((c) => c.type === GATE)!.status,
        'True',
        `${pod.metadata!.name} back in service`,
      );
  });

  test('lost mid-flight with countNodeFailures: counted, halts; its rollback is left pending', async () => {
    const { n, events, d } = losingN0AsWeb0Closes();
    const r = await runRollout(
      plan(
        '{ waves: ["100%"], concurrency: 1, maxUnavailable: 2 }',
        '{ maxFailed: 0, rollback: failed, countNodeFailures: true }',
      ),
      { ...d, nodes: n.view },
    );
    assert.equal(r.phase, 'Halted', r.message);
    assert.equal(r.exitCode, 3);
    assert.match(r.message, /web\/web-0 \(NodeNotReady\)/);
    assert.match(r.message, /rollback pending, run again once the node is back: web\/web-0/);
    assert.ok(
      !events.some((e) => e.event === 'pod-start' && e.pod === 'web/web-1'),
      'nothing new starts after the halt',
    );
  });
});

describe('runRollout resuming pods an earlier run left drained', () => {
  test('drained pods of a later wave do not hold the budget against the first wave for ever: all finish, none beyond those already out', async () => {
    const p = plan('{ waves: [1, "100%"], concurrency: 2, maxUnavailable: 2 }');
    const f = fleet(4);
    // A killed run drained web-0 (wave 1, left for its NotReady node) and went on to drain web-1
    // and web-2 (wave 2): three pods out of service against a budget of 2 (real chaos seed 2634132944).
    for (const i of [0, 1, 2]) {
      f.pods.set(
        `web/web-${i}`,
        makePod({
          name: `web-${i}`,
          namespace: 'web',
          uid: `u${i}`,
          rv: '10',
          gate: 'False',
          gateReason: 'InPlaceUpdate',
          gateMessage: gateMessage('upgrade', 'p', p.revision),
        }),
      );
    }
    const events: RolloutEvent[] = [];
    const r = await runBounded(p, deps(f, events), events, budgetWaits(events));
    assert.equal(r.phase, 'Completed');
    for (const pod of f.pods.values()) {
      assert.equal(pod.spec!.containers[0]!.image, 'nginx:1.25.3', pod.metadata!.name);
      assert.equal(
        pod.status!.conditions!.find((c) => c.type === GATE)!.status,
        'True',
        `${pod.metadata!.name} back in service`,
      );
    }
    assert.ok(f.most.notReady <= 3, `never more pods out than the three already out: ${f.most.notReady}`);
  });

  test('one whose node is down as the run starts is not passed over: once the node is back it finishes, though the wave has its count and a start holds the one slot waiting for its budget; Completed', async () => {
    // Chaos on real kubelets (seed 2581273034): web-2, left drained by a killed run, was passed
    // over for its NotReady node; the wave took web-0 and web-1 instead, web-0 took the one slot
    // and waited for the budget web-2 held, and nothing took web-2 once its node was back.
    const p = plan('{ waves: [2, "100%"], concurrency: 1, maxUnavailable: 1 }');
    const f = fleet(4);
    const n = fleetNodes(f, 4);
    drainedByEarlierRun(f, 'web/web-2', p);
    n.down('n2');
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    // The node's grace never runs out here: it is back well within it.
    d.sleep = sleepUntilEnd;
    d.sink = recording(events, (e) => {
      if (e.event === 'budget-wait') setTimeout(() => n.up('n2'), 20);
    });
    const r = await runBounded(p, { ...d, nodes: n.view }, events);
    assert.equal(r.phase, 'Completed', r.message);
    assertAllUpgraded(f);
  });

  test('a pod not Ready for its own reasons that holds the budget while it queues for the one slot: the pod holding the slot gives it way; Completed', async () => {
    // Waiting on, each would wait for the other for ever: web-0 in the slot for the budget web-1
    // holds, web-1 (whose start adds no unavailable pod) for the slot.
    const p = plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }');
    const f = fleet(3);
    f.update('web/web-1', (q) => {
      q.status!.containerStatuses![0]!.ready = false;
    });
    const events: RolloutEvent[] = [];
    const r = await runBounded(p, deps(f, events), events);
    assert.equal(r.phase, 'Completed', r.message);
    const starts = podStarts(events);
    assert.equal(starts[0], 'web/web-1', 'the pod out of service already goes first');
    assert.equal(starts.length, 3);
    assert.ok(f.most.notReady <= 1, `never more than the budget out: ${f.most.notReady}`);
  });

  test('a pod started while not Ready (no budget taken) that is Ready again at its drain waits for the budget', async () => {
    // Embedded chaos (seed 3592281594): demo-3, not Ready while its node was NotReady, started
    // whatever the budget; its node came back, its kubelet turned it Ready, and the gate closed on
    // a Ready pod while demo-1, drained and waiting for its own node, held the whole budget of 1.
    const p = plan('{ waves: ["100%"], concurrency: 2, maxUnavailable: 1 }');
    const f = fleet(2);
    const n = fleetNodes(f, 2);
    drainedByEarlierRun(f, 'web/web-0', p);
    n.down('n0');
    f.update('web/web-1', (q) => {
      q.status!.containerStatuses![0]!.ready = false;
    });
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    d.sleep = sleepUntilEnd;
    d.sink = recording(events, (e) => {
      if (
        e.event === 'pod-start' &&
        e.pod === 'web/web-1' &&
        !f.pods.get('web/web-1')!.status!.containerStatuses![0]!.ready
      )
        f.update('web/web-1', (q) => {
          q.status!.containerStatuses![0]!.ready = true;
        });
      if (e.event === 'budget-wait' || (e.event === 'pod-end' && e.pod === 'web/web-1'))
        setTimeout(() => n.up('n0'), 10);
    });
    const r = await runBounded(p, { ...d, nodes: n.view }, events);
    assert.equal(r.phase, 'Completed', r.message);
    assert.equal(f.most.gateClosed, 1, "web-1's gate closed only once web-0's was open again");
    const starts = podStarts(events);
    assert.deepEqual(starts, ['web/web-1', 'web/web-0', 'web/web-1'], 'web-1 queued again once it was Ready');
    // Its gate's close met a 409 (the pod Ready since), so its start had been announced: its end is told.
    const ends = events.filter((e) => e.event === 'pod-end' && e.pod === 'web/web-1');
    assert.deepEqual(
      ends.map((e) => e.event === 'pod-end' && e.result),
      ['aborted', 'upgraded'],
    );
  });

  test("the same in the parked pods' limiter: a drained pod and a Ready one both wait for their nodes, the Ready one's back first; Completed", async () => {
    // Kubelet chaos (seed 1570415617): every node NotReady after an apiserver restart, so every
    // pod parked; web-1 took the parked pods' one slot once its node was back and waited for the
    // budget web-0 (left drained by a killed run) held, web-0 queued behind it.
    const p = plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }');
    const f = fleet(2);
    const n = fleetNodes(f, 2);
    drainedByEarlierRun(f, 'web/web-0', p);
    n.down('n0');
    n.down('n1');
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    d.sleep = sleepUntilEnd;
    d.sink = recording(events, (e) => {
      if (e.event === 'pod-waiting' && e.pod === 'web/web-1') {
        setTimeout(() => n.up('n1'), 10);
        setTimeout(() => n.up('n0'), 40);
      }
    });
    const r = await runBounded(p, { ...d, nodes: n.view }, events);
    assert.equal(r.phase, 'Completed', r.message);
    assertAllUpgraded(f);
  });

  test('a halt while such a pod waits for its start (its node just back, the one slot taken): rollback: failed reopens its gate too', async () => {
    // Chaos on a real kubelet (seed 842216360): the halt found the drained pod queued, so it never
    // ran, and being no failure it was no rollback target: left out of service for good.
    const p = plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 2 }', '{ maxFailed: 0, rollback: failed }');
    const f = fleet(2, { brokenPods: new Set(['web-0']) });
    const n = fleetNodes(f, 2);
    drainedByEarlierRun(f, 'web/web-1', p);
    n.down('n1');
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    d.sink = recording(events, (e) => {
      if (e.event === 'pod-start' && e.pod === 'web/web-0') n.up('n1');
    });
    const r = await runRollout(p, { ...d, nodes: n.view });
    assert.equal(r.phase, 'Halted', r.message);
    const rollbackStart = events.findIndex((e) => e.event === 'rollback-start');
    assert.ok(
      !events.slice(0, rollbackStart).some((e) => e.event === 'pod-start' && e.pod === 'web/web-1'),
      'web-1 never started its upgrade',
    );
    const web1 = f.pods.get('web/web-1')!;
    assert.equal(web1.status!.conditions!.find((c) => c.type === GATE)!.status, 'True', 'not left drained');
    assert.equal(web1.spec!.containers[0]!.image, 'nginx:1.14.2', 'never patched');
  });
  test('a pod an earlier run drained, then deleted by someone else: it holds the budget until it is gone', async () => {
    // Kubelet chaos (seed 1570415617): the chaos deleted demo-1 as kwave closed its gate; the next
    // run left the terminating pod out of its selection and of its budget, and drained demo-2
    // while demo-1, gate closed, was still terminating: two out at once with maxUnavailable 1.
    const p = plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }');
    const f = fleet(2);
    drainedByEarlierRun(f, 'web/web-0', p);
    f.update('web/web-0', (q) => {
      q.metadata!.deletionTimestamp = new Date();
    });
    const events: RolloutEvent[] = [];
    const d = deps(f, events);
    d.sink = recording(events, (e) => {
      if (e.event === 'budget-wait') setTimeout(() => f.remove('web/web-0'), 10);
    });
    const r = await runBounded(p, d, events);
    assert.equal(r.phase, 'Completed', r.message);
    assert.equal(f.most.gateClosed, 1, "web-1's gate closed only once web-0 was gone");
    assert.ok(events.some((e) => e.event === 'budget-wait'));
  });

  test('such a pod on a node that cannot act, past its grace: the pods it holds back are left for that node; Partial', async () => {
    const p = plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }');
    const f = fleet(2);
    const n = fleetNodes(f, 2);
    drainedByEarlierRun(f, 'web/web-0', p);
    f.update('web/web-0', (q) => {
      q.metadata!.deletionTimestamp = new Date();
    });
    n.down('n0');
    const events: RolloutEvent[] = [];
    const r = await runBounded(p, { ...deps(f, events), nodes: n.view }, events);
    assert.equal(r.phase, 'Partial', r.message);
    assert.match(r.message, /budget of 1 is held by web\/web-0, left for its node/);
    assert.equal(f.pods.get('web/web-1')!.spec!.containers[0]!.image, 'nginx:1.14.2');
  });
});

describe('runRollout outside its window', () => {
  test('finishes the pods an earlier run left drained, then waits for the window', async () => {
    const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][(new Date().getUTCDay() + 3) % 7];
    const p = plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }');
    const withWindow = loadPlanText(
      p.source.text + `  window: { timezone: UTC, allow: ["${day} 01:00-02:00"] }\n`,
      'w.yaml',
    );
    assert.ok(withWindow.ok);
    const wp = withWindow.plan;
    const f = fleet(3);
    // web-1 was drained by this plan's revision, then the runner died before the patch.
    f.pods.set(
      'web/web-1',
      makePod({
        name: 'web-1',
        namespace: 'web',
        uid: 'u1',
        rv: '10',
        gate: 'False',
        gateReason: 'InPlaceUpdate',
        gateMessage: gateMessage('upgrade', 'p', wp.revision),
      }),
    );
    const stop = new AbortController();
    const events: RolloutEvent[] = [];
    const r = await runRollout(wp, {
      ...deps(f, events),
      stop: stop.signal,
      sleep: async () => {
        stop.abort(); // Ctrl-C while waiting for the window
        return false;
      },
    });
    assert.equal(r.phase, 'Paused');
    assert.ok(events.some((e) => e.event === 'window-wait'));
    const web1 = f.pods.get('web/web-1')!;
    assert.equal(web1.spec!.containers[0]!.image, 'nginx:1.25.3');
    assert.equal(web1.status!.conditions!.find((c) => c.type === GATE)!.status, 'True', 'not left drained');
    assert.deepEqual(
      f.writes.filter((w) => !w.endsWith('web-1')),
      [],
      'the others wait for the window',
    );
  });
});

describe('runRollout under remote control', () => {
  test('a pause standing at the start holds every pod start until resumed, reported as paused / resumed', async () => {
    const f = fleet(4);
    const events: RolloutEvent[] = [];
    const rc = remote();
    rc.state.paused = { by: 'alice@laptop', at: '2026-12-01T12:00:00.000Z' };
    const sink = (e: RolloutEvent) => {
      events.push(e);
      // Resumed a turn later: had the pause not held, the pods would have started in between.
      if (e.event === 'paused')
        setImmediate(
          () => (
            (rc.state.paused = undefined),
            (rc.state.resumed = { by: 'bob@desk', at: '2026-12-01T12:00:05.000Z' }),
            rc.fire()
          ),
        );
    };
    const r = await runRollout(plan('{ waves: [1, "100%"], concurrency: 2, maxUnavailable: 2 }'), {
      ...deps(f),
      sink,
      control: rc.control,
    });
    assert.equal(r.phase, 'Completed');
    const kinds = events.map((e) => e.event);
    assert.deepEqual(kinds.slice(0, 3), ['rollout-start', 'paused', 'resumed']);
    assert.deepEqual(events[2], {
      time: events[2]!.time,
      plan: 'p',
      event: 'resumed',
      wave: 0,
      by: 'bob@desk',
      at: '2026-12-01T12:00:05.000Z',
    });
    assert.equal(kinds.filter((k) => k === 'pod-start').length, 4);
  });

  test('an abort mid-wave halts (reason aborted): pods in flight finish, no new one starts, rollback: all reverts; exit 3', async () => {
    const f = fleet(6);
    const events: RolloutEvent[] = [];
    const rc = remote();
    const sink = abortAtFirstPodStart(rc, events);
    const r = await runRollout(
      plan('{ waves: ["100%"], concurrency: 1, maxUnavailable: 1 }', '{ maxFailed: 0, rollback: all }'),
      { ...deps(f), sink, control: rc.control },
    );
    assert.equal(r.exitCode, 3);
    assert.equal(r.phase, 'RolledBack');
    const halt = events.find((e) => e.event === 'halt');
    assert.deepEqual(halt && { ...halt, time: '' }, {
      time: '',
      plan: 'p',
      event: 'halt',
      wave: 1,
      reason: 'aborted',
      message: 'aborted by ops@ci (kwave abort at 2026-12-01T12:00:00.000Z)',
    });
    assert.equal(events.filter((e) => e.event === 'pod-start').length, 2, 'the pod in flight, then its rollback');
    for (const p of f.pods.values()) assert.equal(p.spec!.containers[0]!.image, 'nginx:1.14.2');
  });
});
