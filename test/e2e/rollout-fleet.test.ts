// A fleet of 200 pods carried through 4 waves by the real `kwave run`, with 3 selected pods
// unready all along: every other pod upgraded exactly once, and the simulator's own count of
// not-Ready pods never above maxUnavailable.
//
// The 3 unready pods: they already run the target image, on a node whose kubelet lost contact
// (POST /sim/nodes/node-4/not-ready: their Ready turns False, as the node controller does). They
// match the selector, so they are part of the selection: they count toward the wave targets as
// already done, kwave never touches them, and — "pods unready for other reasons count" — they
// hold 3 of the 10 budget slots for the whole run. Pods kwave could fix (not at the target) would
// be upgraded and become Ready; pods outside the selection would not count at all; only these
// stay unready from start to end.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
nodes:
  - { name: node-1, zone: zone-a }
  - { name: node-2, zone: zone-b }
  - { name: node-3, zone: zone-c }
  - { name: node-4, zone: zone-c }
workloads:
  - name: web
    replicas: 197
    labels: { app: web }
    containers: [{ name: nginx, image: "nginx:1.14.2" }]
    nodes: [node-1, node-2, node-3]
  - name: web-lost
    replicas: 3
    labels: { app: web }
    containers: [{ name: nginx, image: "nginx:1.25.3" }]
    nodes: [node-4]
`;

const BUDGET = 10; // maxUnavailable "5%" of 200 selected pods

describe('kwave run: 200 pods, 4 waves, 3 pods unready beforehand', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ fixture: FIXTURE, timeScale: 0.3 });
  });
  after(async () => fleet?.close());

  test('upgrades every pod exactly once and never has more than maxUnavailable pods not Ready', async () => {
    await fleet.admin('/sim/nodes/node-4/not-ready');
    const before = await fleet.pods('web');
    assert.equal(before.size, 200);
    const lost = [...before.values()].filter((p) => p.node === 'node-4');
    assert.deepEqual(lost.map((p) => p.name).sort(), ['web-lost-0', 'web-lost-1', 'web-lost-2']);
    assert.ok(
      lost.every((p) => !p.ready),
      'the pods of the lost node are not Ready before the run',
    );
    for (const p of before.values()) if (p.node !== 'node-4') assert.equal(p.imageID, OLD_ID);

    const plan = await fleet.writePlan(
      'fleet.yaml',
      planYaml({
        name: 'fleet',
        app: 'web',
        waves: '["5%", "25%", "50%", "100%"]',
        concurrency: 10,
        maxUnavailable: '5%',
        podTimeout: '60s',
      }),
    );
    // High-water marks restart from the pods not Ready now: the 3 of node-4.
    const reset = await fleet.resetStats();
    assert.equal(reset.notReady.default, 3);

    const started = Date.now();
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(exit.code, 0, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-2000)}`);
    const end = endOf(run);
    assert.equal(end.phase, 'Completed');

    const start = run.events.find((e) => e.event === 'rollout-start');
    assert.ok(start && start.event === 'rollout-start');
    assert.equal(start.selected, 200);
    assert.equal(start.alreadyDone, 3);
    assert.equal(start.waves, 4);
    assert.equal(start.budget, BUDGET);
    // Targets 10, 50, 100, 200 of 200, the 3 pods already at the target counting first.
    const waves = run.events.flatMap((e) => (e.event === 'wave-start' ? [[e.wave, e.pods]] : []));
    assert.deepEqual(waves, [
      [1, 7],
      [2, 40],
      [3, 50],
      [4, 100],
    ]);

    // The unready pods held budget: kwave waited for it, naming them.
    const waits = run.events.filter((e) => e.event === 'budget-wait');
    assert.ok(waits.length > 0, 'kwave waited for the budget at least once');
    assert.ok(
      waits.some((e) => e.event === 'budget-wait' && e.budget === BUDGET && e.holders.includes('default/web-lost-0')),
      JSON.stringify(waits.slice(0, 3)),
    );

    const ended = run.events.filter((e) => e.event === 'pod-end');
    assert.equal(ended.length, 197);
    assert.ok(ended.every((e) => e.event === 'pod-end' && e.result === 'upgraded'));
    assert.equal(new Set(ended.map((e) => (e.event === 'pod-end' ? e.pod : ''))).size, 197);

    const now = await fleet.pods('web');
    for (const [name, p] of now) {
      const was = before.get(name)!;
      if (p.node === 'node-4') {
        // Never touched: same container, no kwave state, still not Ready.
        assert.equal(p.containerID, was.containerID, name);
        assert.equal(p.annotation, undefined, name);
        assert.equal(p.ready, false, name);
        continue;
      }
      assert.equal(p.restartCount, was.restartCount + 1, `${name}: restartCount`);
      assert.equal(p.specImage, 'nginx:1.25.3', name);
      assert.equal(p.imageID, NEW_ID, name);
      assert.notEqual(p.containerID, was.containerID, name);
      assert.equal(p.gate, 'True', `${name}: gate`);
      assert.equal(p.ready, true, `${name}: Ready`);
    }

    const stats = await fleet.stats();
    const maxNotReady = stats.maxNotReady.default ?? 0;
    assert.ok(maxNotReady <= BUDGET, `most pods not Ready at once: ${maxNotReady}, maxUnavailable ${BUDGET}`);
    // At least one pod was in flight while the 3 were down: the mark is not just the 3.
    assert.ok(maxNotReady > 3, `maxNotReady ${maxNotReady}`);
    // 3 writes per pod: gate closed and reopened (pods/status), one guarded image patch.
    assert.equal(stats.requests['patch pods'], 197);
    assert.equal(stats.requests['patch pods/status'], 2 * 197);

    const record = await fleet.status(plan);
    assert.equal(record.phase, 'Completed');
    assert.equal(record.lock, null, 'the lease is released at the end');
    // The measured figures, for the report.
    console.log(
      `# fleet: 197 pods upgraded in ${seconds.toFixed(1)} s; maxNotReady ${maxNotReady} (budget ${BUDGET}, 3 unready throughout); budget waits ${waits.length}`,
    );
  });
});
