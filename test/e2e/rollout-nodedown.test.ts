// Issue #16: a node that is down must not halt the fleet, and a re-run finishes what its own
// earlier runs left. The real `kwave run` against the simulator, 3 pods one per node
// (demo-1 lives on sim-node-2), concurrency 3, podTimeout 5s, maxFailed 0, rollback failed.
//
// 1. sim-node-2 NotReady before the run: demo-1 is deferred, never touched (no gate closed, no
//    patch); the others are upgraded; the run ends Partial with exit 5, naming demo-1. The node
//    comes back and a second run upgrades demo-1.
// 2. sim-node-2 lost after demo-1's image patch (the target image pulls slowly, so the patch
//    lands before the kubelet acts): demo-1 ends NodeNotReady (not Timeout), which does not count
//    toward maxFailed: no halt, no rollback. The node comes back and a re-run finishes demo-1
//    from its own state. The node back while the run still has work: demo-1 waits apart for it
//    and is finished in the same run.
// 3. sim-node-2 NotReady before the run and back 2 s after the others are done, within its
//    grace (strategy.nodeGraceSeconds): the same run upgrades demo-1, Completed, exit 0.
// Neither output may mention OtherRollout: every pod kwave meets is this plan's revision's own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet, type Fleet, type RunningKwave } from './helpers/rolloutCli.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

/** The exit code of a run that ends Partial with pods left waiting for their nodes (docs/cli.md). */
const EXIT_NODES_DOWN = 5;

const PLAN = { waves: '["100%"]', concurrency: 3, podTimeout: '5s', maxFailed: 0, rollback: 'failed' as const };

function noOtherRollout(run: RunningKwave): void {
  assert.doesNotMatch(
    run.stdout() + run.stderr(),
    /OtherRollout|held closed by/,
    'no pod is reported as held by another rollout',
  );
}

/** Waits for `run` to exit with `code` (saying what it printed otherwise); no pod was held by another rollout. */
async function exitsWith(run: RunningKwave, code: number): Promise<void> {
  const exit = await exitOf(run, 90_000);
  noOtherRollout(run);
  assert.equal(exit.code, code, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-3000)}`);
}

/** `kwave run plan`, sim-node-2 taken away once demo-1's image patch is made; the run exits with `code`. */
async function runLosingNode2(fleet: Fleet, plan: string, code: number): Promise<RunningKwave> {
  const run = fleet.start(['run', plan]);
  await run.waitFor(
    (e) => e.event === 'pod-step' && e.pod === 'default/demo-1' && e.step === 'wait-complete',
    'demo-1 patched',
    60_000,
  );
  await fleet.admin('/sim/nodes/sim-node-2/not-ready');
  await exitsWith(run, code);
  return run;
}

function podEnds(run: RunningKwave): Record<string, { result: string; reason?: string; message: string }> {
  const out: Record<string, { result: string; reason?: string; message: string }> = {};
  for (const e of run.events)
    if (e.event === 'pod-end')
      out[e.pod] = { result: e.result, ...(e.reason ? { reason: e.reason } : {}), message: e.message };
  return out;
}

describe('a node NotReady before the run: its pods wait, the rest is upgraded, Partial (exit 5); a re-run finishes', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ pods: 3, timeScale: 0.3 });
  });
  after(async () => fleet?.close());

  test('first run: demo-1 untouched, demo-0 and demo-2 upgraded; second run after the node is back: demo-1 upgraded', async () => {
    await fleet.admin('/sim/nodes/sim-node-2/not-ready');
    const before = await fleet.pods();
    assert.equal(before.get('demo-1')!.node, 'sim-node-2');
    // The node stays down: no grace, so the run leaves demo-1 as soon as the rest is done.
    const plan = await fleet.writePlan('nodedown.yaml', planYaml({ name: 'nodedown', ...PLAN, nodeGraceSeconds: 0 }));

    // kwave plan lists the waiting pod up front, before the waves.
    const dry = await fleet.kwave(['plan', plan]);
    assert.equal(dry.code, 0, dry.stderr);
    const upFront = dry.stdout.split('\n\n')[0]!;
    assert.match(upFront, /waiting for their node \(1\)/, dry.stdout);
    assert.match(upFront, /default\/demo-1 +node sim-node-2 is NotReady since (?:\d+[hms])+/, dry.stdout);
    const dryJson = JSON.parse((await fleet.kwave(['plan', plan, '-o', 'json'])).stdout) as {
      waitingForNodes: { name: string; node: string }[];
    };
    assert.deepEqual(
      dryJson.waitingForNodes.map((p) => [p.name, p.node]),
      [['demo-1', 'sim-node-2']],
    );

    const first = fleet.start(['run', plan]);
    await exitsWith(first, EXIT_NODES_DOWN);
    const end1 = endOf(first);
    assert.equal(end1.phase, 'Partial');
    assert.match(end1.message, /default\/demo-1/);
    assert.ok(!first.events.some((e) => e.event === 'halt'), 'nothing halts');
    // demo-1 was shown waiting for its node, with the node named.
    const waiting = first.events.find((e) => e.event === 'pod-waiting' && e.pod === 'default/demo-1');
    assert.ok(waiting && waiting.event === 'pod-waiting', first.stdout().slice(-3000));
    assert.match(waiting.message, /^node sim-node-2 is NotReady since (?:\d+[hms])+$/);
    assert.ok(
      !first.events.some((e) => e.event === 'pod-start' && e.pod === 'default/demo-1'),
      'demo-1 is never started',
    );

    const mid = await fleet.pods();
    for (const name of ['demo-0', 'demo-2']) {
      const p = mid.get(name)!;
      assert.equal(p.imageID, NEW_ID, name);
      assert.equal(p.restartCount, before.get(name)!.restartCount + 1, name);
      assert.equal(p.gate, 'True', name);
    }
    const lost = mid.get('demo-1')!;
    assert.equal(lost.restartCount, 0, 'demo-1 not restarted');
    assert.equal(lost.gate, 'True', 'demo-1 gate never closed');
    assert.equal(lost.specImage, 'nginx:1.14.2', 'demo-1 not patched');
    assert.equal(lost.annotation, undefined, 'demo-1 carries no kwave state');
    const status = (await fleet.status(plan)) as {
      phase: string;
      waitingForNodes?: { pod: string; waiting: string }[];
    };
    assert.equal(status.phase, 'Partial');
    assert.equal(status.waitingForNodes?.length, 1);
    assert.equal(status.waitingForNodes?.[0]?.pod, 'default/demo-1');
    assert.match(status.waitingForNodes?.[0]?.waiting ?? '', /^node sim-node-2 is NotReady since (?:\d+[hms])+$/);
    const statusText = await fleet.kwave(['status', plan]);
    assert.match(
      statusText.stdout,
      /default\/demo-1 +waiting: node sim-node-2 is NotReady since (?:\d+[hms])+/,
      statusText.stdout,
    );

    await fleet.admin('/sim/nodes/sim-node-2/ready');
    const second = fleet.start(['run', plan]);
    await exitsWith(second, 0);
    assert.equal(endOf(second).phase, 'Completed');
    assert.deepEqual(Object.keys(podEnds(second)), ['default/demo-1']);
    const after = (await fleet.pods()).get('demo-1')!;
    assert.equal(after.imageID, NEW_ID);
    assert.equal(after.restartCount, 1);
    assert.equal(after.gate, 'True');
    assert.equal(after.ready, true);
  });
});

describe('a node that flaps: back within its grace once the rest is done, its pod is upgraded in the same run', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ pods: 3, timeScale: 0.3 });
  });
  after(async () => fleet?.close());

  test('sim-node-2 NotReady at the start, back 2 s after demo-0 and demo-2 are done: Completed, exit 0', async () => {
    await fleet.admin('/sim/nodes/sim-node-2/not-ready');
    const plan = await fleet.writePlan('flap.yaml', planYaml({ name: 'flap', ...PLAN }));
    const run = fleet.start(['run', plan]);
    for (const pod of ['default/demo-0', 'default/demo-2'])
      await run.waitFor((e) => e.event === 'pod-end' && e.pod === pod, `${pod} done`, 60_000);
    // Without the grace (strategy.nodeGraceSeconds, 30 s by default) the run would end Partial here.
    await new Promise((r) => setTimeout(r, 2000));
    assert.ok(!run.events.some((e) => e.event === 'rollout-end'), `ended before the node came back: ${run.stdout()}`);
    await fleet.admin('/sim/nodes/sim-node-2/ready');
    await exitsWith(run, 0);
    assert.equal(endOf(run).phase, 'Completed');
    assert.equal(podEnds(run)['default/demo-1']?.result, 'upgraded');
    const after = (await fleet.pods()).get('demo-1')!;
    assert.equal(after.imageID, NEW_ID);
    assert.equal(after.gate, 'True');
  });
});

const SLOW_PULL_FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
nodes:
  - { name: sim-node-1, zone: zone-a }
  - { name: sim-node-2, zone: zone-b }
  - { name: sim-node-3, zone: zone-c }
images:
  "nginx:1.14.2": {}
  "nginx:1.25.3": { pullSeconds: 4 }
workloads:
  - name: demo
    replicas: 3
    labels: { app: demo }
    containers: [{ name: nginx, image: "nginx:1.14.2" }]
`;

describe('a node lost after the image patch: NodeNotReady, no halt; a re-run finishes the pod', () => {
  let fleet: Fleet;
  before(async () => {
    // Pulls of the target take 4 s × 0.5: the patch of demo-1 lands well before its kubelet acts.
    fleet = await startFleet({ fixture: SLOW_PULL_FIXTURE, timeScale: 0.5 });
  });
  after(async () => fleet?.close());

  test('first run: demo-1 ends NodeNotReady, not rolled back, no halt; re-run after the node is back: demo-1 upgraded', async () => {
    const before = await fleet.pods();
    const plan = await fleet.writePlan(
      'nodedown.yaml',
      planYaml({ name: 'nodedown', ...PLAN, podTimeout: '20s', nodeGraceSeconds: 0 }),
    );
    const first = await runLosingNode2(fleet, plan, EXIT_NODES_DOWN);
    assert.equal(endOf(first).phase, 'Partial');
    assert.ok(!first.events.some((e) => e.event === 'halt'), `nothing halts\n${first.stdout().slice(-3000)}`);
    assert.ok(!first.events.some((e) => e.event === 'rollback-start'), 'no rollback');
    const ends = podEnds(first);
    assert.equal(ends['default/demo-0']?.result, 'upgraded');
    assert.equal(ends['default/demo-2']?.result, 'upgraded');
    assert.equal(ends['default/demo-1']?.result, 'failed');
    assert.equal(ends['default/demo-1']?.reason, 'NodeNotReady');
    assert.match(ends['default/demo-1']!.message, /node sim-node-2 is NotReady since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);

    // Patched, not yet acted on: the spec names the target, the old container still runs.
    const mid = (await fleet.pods()).get('demo-1')!;
    assert.equal(mid.specImage, 'nginx:1.25.3');
    assert.equal(mid.imageID, OLD_ID);
    assert.equal(mid.restartCount, before.get('demo-1')!.restartCount);

    await fleet.admin('/sim/nodes/sim-node-2/ready');
    const second = fleet.start(['run', plan]);
    await exitsWith(second, 0);
    assert.equal(endOf(second).phase, 'Completed');
    assert.deepEqual(podEnds(second), { 'default/demo-1': { result: 'upgraded', message: 'upgraded' } });
    const after = (await fleet.pods()).get('demo-1')!;
    assert.equal(after.imageID, NEW_ID);
    assert.equal(after.restartCount, before.get('demo-1')!.restartCount + 1);
    assert.equal(after.gate, 'True');
    assert.equal(after.ready, true);
  });
});

describe('a node lost after the image patch and back while the run goes on: the pod finishes in the same run', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ fixture: SLOW_PULL_FIXTURE, timeScale: 0.5 });
  });
  after(async () => fleet?.close());

  // On a busy real control plane a node's heartbeat can come a few seconds late as a wave begins;
  // its pods in flight must wait for it in the same run, not be left drained for a re-run.
  test('demo-1 waits for its node (step wait-node), then is upgraded: Completed, exit 0, nothing left', async () => {
    const before = await fleet.pods();
    // One pod at a time: demo-2 starts only once demo-1 waits apart, and its upgrade (a 2 s pull)
    // keeps the run going while the node comes back (on the real control plane the node is seen
    // lost only after the lifecycle controller's grace period).
    const plan = await fleet.writePlan(
      'nodeback.yaml',
      planYaml({ name: 'nodeback', ...PLAN, concurrency: 1, podTimeout: '20s' }),
    );
    const run = fleet.start(['run', plan]);
    await run.waitFor(
      (e) => e.event === 'pod-step' && e.pod === 'default/demo-1' && e.step === 'wait-complete',
      'demo-1 patched',
      60_000,
    );
    await fleet.admin('/sim/nodes/sim-node-2/not-ready');
    const waiting = await run.waitFor(
      (e) => e.event === 'pod-step' && e.pod === 'default/demo-1' && e.step === 'wait-node',
      'demo-1 waits for its node',
      30_000,
    );
    assert.match('message' in waiting ? (waiting.message ?? '') : '', /^node sim-node-2 is NotReady/);
    assert.ok(
      !run.events.some((e) => e.event === 'pod-end' && e.pod !== 'default/demo-1' && e.result !== 'upgraded'),
      run.stdout().slice(-3000),
    );
    await fleet.admin('/sim/nodes/sim-node-2/ready');
    await exitsWith(run, 0);
    assert.equal(endOf(run).phase, 'Completed');
    assert.deepEqual(podEnds(run), {
      'default/demo-0': { result: 'upgraded', message: 'upgraded' },
      'default/demo-1': { result: 'upgraded', message: 'upgraded' },
      'default/demo-2': { result: 'upgraded', message: 'upgraded' },
    });
    assert.equal(
      run.events.filter((e) => e.event === 'pod-start' && e.pod === 'default/demo-1').length,
      1,
      'one start: the flow went on, not a new one',
    );
    const after = (await fleet.pods()).get('demo-1')!;
    assert.equal(after.imageID, NEW_ID);
    assert.equal(after.restartCount, before.get('demo-1')!.restartCount + 1);
    assert.equal(after.gate, 'True');
    assert.equal(after.ready, true);
  });
});

describe('countNodeFailures: a node lost mid-flight counts toward maxFailed; its rollback waits for the node', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ fixture: SLOW_PULL_FIXTURE, timeScale: 0.5 });
  });
  after(async () => fleet?.close());

  test('halt (exit 3) naming NodeNotReady, rollback of demo-1 pending, not attempted; kwave rollback reverts it once the node is back', async () => {
    // podTimeout longer than the real node-lifecycle controller takes to see the node go (its
    // grace period is 8 s in `kwave sim --control-plane real`), shorter than the 30 s pull.
    const yaml = planYaml({ name: 'counted', ...PLAN, podTimeout: '20s' }).replace(
      'rollback: failed',
      'rollback: failed\n    countNodeFailures: true',
    );
    assert.match(yaml, /countNodeFailures: true/);
    const plan = await fleet.writePlan('counted.yaml', yaml);
    const first = await runLosingNode2(fleet, plan, 3);
    const end1 = endOf(first);
    assert.equal(end1.phase, 'Halted');
    assert.match(end1.message, /default\/demo-1 \(NodeNotReady\)/);
    assert.match(
      end1.message,
      /rollback pending, run again once the node is back: default\/demo-1 \(node sim-node-2 is NotReady since (?:\d+[hms])+\)/,
    );
    assert.ok(
      !first.events.some(
        (e) =>
          e.event === 'pod-start' &&
          e.pod === 'default/demo-1' &&
          first.events.indexOf(e) > first.events.findIndex((h) => h.event === 'halt'),
      ),
      'no rollback flow started for demo-1',
    );
    const mid = (await fleet.pods()).get('demo-1')!;
    assert.equal(mid.specImage, 'nginx:1.25.3', 'the rollback patch was not sent');

    await fleet.admin('/sim/nodes/sim-node-2/ready');
    const back = fleet.start(['rollback', plan]);
    await exitsWith(back, 0);
    assert.equal(endOf(back).phase, 'RolledBack');
    const after = (await fleet.pods()).get('demo-1')!;
    assert.equal(after.specImage, 'nginx:1.14.2');
    assert.equal(after.imageID, OLD_ID);
    assert.equal(after.gate, 'True');
    assert.equal(after.ready, true);
  });
});

describe('the first SIGINT says what it waits for; a pod waiting for its node is left at once', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ fixture: SLOW_PULL_FIXTURE, timeScale: 0.5 });
  });
  after(async () => fleet?.close());

  test('names the pods in flight and the waiting one; in-flight pods finish; exit 4; demo-1 untouched', async () => {
    await fleet.admin('/sim/nodes/sim-node-2/not-ready');
    const plan = await fleet.writePlan('stop.yaml', planYaml({ name: 'stop', ...PLAN, podTimeout: '30s' }));
    const run = fleet.start(['run', plan]);
    await run.waitFor((e) => e.event === 'pod-waiting' && e.pod === 'default/demo-1', 'demo-1 waiting', 60_000);
    await run.waitFor(
      (e) => e.event === 'pod-step' && e.pod === 'default/demo-0' && e.step === 'wait-complete',
      'demo-0 patched',
      60_000,
    );
    run.child.kill('SIGINT');
    const said = await run.waitFor((e) => e.event === 'interrupt', 'the interrupt event', 30_000);
    assert.ok(said.event === 'interrupt');
    assert.match(said.message, /waiting for \d pods? in flight to finish: .*default\/demo-0 \(wait-complete\)/);
    assert.match(
      said.message,
      /not waiting for default\/demo-1 \(node sim-node-2 is NotReady since (?:\d+[hms])+\): left resumable/,
    );
    const exit = await exitOf(run, 90_000);
    assert.equal(exit.code, 4, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-3000)}`);
    assert.equal(endOf(run).phase, 'Paused');
    const pods = await fleet.pods();
    assert.equal(pods.get('demo-0')!.imageID, NEW_ID, 'the pod in flight finished');
    const lost = pods.get('demo-1')!;
    assert.equal(lost.annotation, undefined);
    assert.equal(lost.gate, 'True');
  });
});
