// Issue 31, item 1: a wave is done only when its pods are. The real `kwave run` against the
// cluster the backend gives, six pods on three nodes, waves [1, "100%"], a gate after wave 1.
//
// 1. The node of the canary (demo-0, first by name) NotReady before the run: `kwave plan` names
//    the pod that stands in; the run upgrades that pod in wave 1, and the gate starts only once it
//    has ended upgraded; read back from the cluster. The canary's node's pods are left: Partial.
// 2. Every node NotReady: no pod can reach wave 1's count, so the run ends Partial (exit 5) before
//    the gate, the reason in its output and its record; wave 2 never starts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

/** The exit code of a run that ends Partial with pods left waiting for their nodes (README). */
const EXIT_NODES_DOWN = 5;

const PLAN = {
  waves: '[1, "100%"]',
  concurrency: 2,
  // The NotReady node's two pods may be marked not Ready (the node lifecycle controller): room for one more.
  maxUnavailable: 3,
  podTimeout: '20s',
  maxFailed: 0,
  rollback: 'failed' as const,
  gates: [{ name: 'canary-check', pause: '1s', afterWaves: [1] }],
  // The nodes taken down stay down: the run gives up on them at once.
  nodeGraceSeconds: 0,
};

describe("the canary's node NotReady: another pod stands in, and the gate judges it upgraded", () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ pods: 6, timeScale: 0.3 });
  });
  after(async () => fleet?.close());

  test('kwave plan names the stand-in; the run upgrades it in wave 1 before the gate; Partial, exit 5', async () => {
    const pods = await fleet.pods();
    const down = pods.get('demo-0')!.node;
    await fleet.admin(`/sim/nodes/${down}/not-ready`);
    const onDown = [...pods.values()].filter((p) => p.node === down).map((p) => `default/${p.name}`);
    const standIn = [...pods.values()]
      .map((p) => p.name)
      .sort()
      .find((name) => pods.get(name)!.node !== down)!;
    const plan = await fleet.writePlan('canary.yaml', planYaml({ name: 'canary', ...PLAN }));

    const dry = await fleet.kwave(['plan', plan]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stdout,
      new RegExp(`standing in for default/demo-0 \\(waiting for their node\\): default/${standIn}\\n`),
      dry.stdout,
    );
    const dryJson = JSON.parse((await fleet.kwave(['plan', plan, '-o', 'json'])).stdout) as {
      waves: { wave: number; standIns?: { name: string }[]; standingInFor?: { name: string }[] }[];
    };
    assert.deepEqual(
      dryJson.waves[0]!.standIns?.map((p) => p.name),
      [standIn],
    );
    assert.deepEqual(
      dryJson.waves[0]!.standingInFor?.map((p) => p.name),
      ['demo-0'],
    );

    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run, 120_000);
    assert.equal(exit.code, EXIT_NODES_DOWN, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-3000)}`);
    const events = run.events;
    const gateAt = events.findIndex((e) => e.event === 'gate-start' && e.wave === 1);
    assert.ok(gateAt > 0, 'the gate after wave 1 ran');
    const wave1 = events.slice(0, gateAt);
    assert.deepEqual(
      wave1.filter((e) => e.event === 'pod-start').map((e) => e.event === 'pod-start' && e.pod),
      [`default/${standIn}`],
      'only the stand-in started before the gate',
    );
    assert.ok(
      wave1.some((e) => e.event === 'pod-end' && e.pod === `default/${standIn}` && e.result === 'upgraded'),
      'the stand-in ended upgraded before the gate started',
    );
    const waveEnd = wave1.find((e) => e.event === 'wave-end' && e.wave === 1);
    assert.ok(waveEnd && waveEnd.event === 'wave-end' && waveEnd.summary.upgraded === 1, JSON.stringify(waveEnd));
    assert.ok(
      !events.some((e) => e.event === 'pod-start' && onDown.includes(e.pod)),
      'no pod of the NotReady node started',
    );
    const end = endOf(run);
    assert.equal(end.phase, 'Partial');
    for (const p of onDown) assert.match(end.message, new RegExp(p));

    const now = await fleet.pods();
    assert.equal(now.get(standIn)!.imageID, NEW_ID, 'the stand-in runs the new image');
    assert.equal(now.get(standIn)!.gate, 'True');
    for (const [name, p] of now) {
      const left = onDown.includes(`default/${name}`);
      assert.equal(p.imageID, left ? OLD_ID : NEW_ID, name);
    }
  });
});

describe('no pod of the canary wave can act: Partial (exit 5) before the gate', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ pods: 6, timeScale: 0.3 });
  });
  after(async () => fleet?.close());

  test('every node NotReady: no gate, no wave 2, the reason printed and in the record', async () => {
    const nodes = new Set([...(await fleet.pods()).values()].map((p) => p.node));
    for (const n of nodes) await fleet.admin(`/sim/nodes/${n}/not-ready`);
    const plan = await fleet.writePlan('canary-none.yaml', planYaml({ name: 'canary-none', ...PLAN }));
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run, 120_000);
    assert.equal(exit.code, EXIT_NODES_DOWN, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-3000)}`);
    assert.ok(!run.events.some((e) => e.event === 'gate-start'), 'no gate on a canary that never happened');
    assert.ok(!run.events.some((e) => e.event === 'wave-start' && e.wave === 2), 'wave 2 never started');
    assert.ok(!run.events.some((e) => e.event === 'pod-start'), 'no pod started');
    const end = endOf(run);
    assert.equal(end.phase, 'Partial');
    const why =
      /wave 1 reached 0 of its 1 pod at target and has no pod left to take \(\d+ waiting for their node\): the gates after it were not run/;
    assert.match(end.message, why);
    const status = await fleet.status(plan);
    assert.equal(status.phase, 'Partial');
    assert.match(JSON.stringify(status), why);
  });
});
