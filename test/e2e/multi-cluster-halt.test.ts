// Plans across clusters (spec.clusters), when something goes wrong, through the real `kwave`
// binary against three clusters in one kubeconfig, read back from the clusters themselves:
// - a halt in sim-2 leaves sim-3 untouched (no pod write in its /sim/stats, no pod changed) and
//   the rollback policy (`all`) reverts sim-1, which had changed;
// - a SIGKILL half-way through sim-2, then the same plan again: every pod upgraded exactly once
//   (restartCount 1), from the clusters' own state.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { exitOf } from './helpers/rolloutCli.js';
import { assertAllUpgradedOnce, multiPlan, startMultiFleet, type MultiFleet } from './helpers/multiFleet.js';

describe('kwave run: a plan across clusters that halts or is killed', () => {
  const fleets: MultiFleet[] = [];
  // Each test closes its clusters at its end; this closes them after a failure too.
  after(async () => {
    for (const f of fleets) await f.close();
  });

  test('a halt in the second cluster: the third is never touched; rollback all reverts the first, which had changed', async () => {
    // sim-2's nodes cannot pull the new image (their mirror lacks it): its first pod fails.
    const broken = `apiVersion: kwave.dev/v1alpha1
kind: SimFixture
nodes:
  - { name: node-1, zone: zone-a, missingImages: ["nginx:1.25.3"] }
  - { name: node-2, zone: zone-b, missingImages: ["nginx:1.25.3"] }
workloads:
  - { name: demo, replicas: 3, labels: { app: demo }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
`;
    const fleet = await startMultiFleet([{ pods: 3 }, { fixture: broken }, { pods: 3 }]);
    fleets.push(fleet);
    const plan = await fleet.writePlan(
      'halt.yaml',
      multiPlan('multi-halt', fleet.names, 'sequential', { rollback: 'all', podTimeout: '60s' }),
    );
    await fleet.resetStats(2);
    const before3 = fleet.pods(2);

    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 3, run.stderr());

    // sim-3: not one pod write, no pod changed.
    const stats3 = await fleet.stats(2);
    for (const key of Object.keys(stats3.requests))
      assert.doesNotMatch(key, /^(patch|update|create|delete) pods/, `sim-3 saw ${key}`);
    assert.deepEqual(
      [...fleet.pods(2).values()].map((p) => [p.name, p.restartCount, p.image]),
      [...before3.values()].map((p) => [p.name, p.restartCount, p.image]),
    );
    assert.ok(!fleet.timeline.some((m) => m.cluster === 'sim-3'), 'no moment of sim-3 in the timeline');

    // sim-2 halted on its first pod and rolled it back; sim-1 (all upgraded first) is rolled back too;
    // sim-3 halted before its first wave, with nothing to revert.
    const failed = fleet.timeline.filter((m) => m.cluster === 'sim-2' && m.what === 'gate-closed').map((m) => m.pod);
    assert.deepEqual(failed, ['demo-0'], 'sim-2 started one pod only');
    for (const [pod, v] of fleet.pods(0)) {
      assert.equal(v.image, 'docker.io/library/nginx:1.14.2', `sim-1 ${pod} rolled back`);
      assert.equal(v.restartCount, 2, `sim-1 ${pod}: upgraded, then rolled back`);
      assert.equal(v.gate, 'True');
    }
    for (const [pod, v] of fleet.pods(1)) assert.equal(v.gate, 'True', `sim-2 ${pod} not left drained`);

    const status = await fleet.kwave(['status', plan, '-o', 'json']);
    const records = status.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { cluster: string; phase: string; message?: string });
    assert.deepEqual(
      records.map((r) => [r.cluster, r.phase]),
      [
        ['sim-1', 'RolledBack'],
        ['sim-2', 'RolledBack'],
        ['sim-3', 'Halted'],
      ],
    );
    const end = run.events.find((e) => e.event === 'rollout-end' && e.cluster === 'sim-3');
    assert.ok(end && end.event === 'rollout-end');
    assert.match(end.message, /cluster sim-2 halted/);
    await fleet.close();
  });

  test('a SIGKILL half-way through the second cluster, then the same plan again: every pod upgraded exactly once', async () => {
    const fleet = await startMultiFleet([{ pods: 3 }, { pods: 4 }, { pods: 3 }]);
    fleets.push(fleet);
    const plan = await fleet.writePlan(
      'resume.yaml',
      multiPlan('multi-resume', fleet.names, 'sequential', { waves: '[1, "50%", "100%"]' }),
    );
    const first = fleet.start(['run', plan]);
    await fleet.waitForTimeline(
      (t) => t.filter((m) => m.cluster === 'sim-2' && m.what === 'restarted').length >= 2,
      'two pods of sim-2 restarted',
    );
    first.child.kill('SIGKILL');
    const killed = await exitOf(first);
    assert.equal(killed.signal, 'SIGKILL');
    const left = [...fleet.pods(1).values()].filter((p) => p.restartCount === 0).map((p) => p.name);
    assert.ok(left.length >= 1, `some pods of sim-2 were left for the second run (left: ${left.join(', ')})`);
    assert.ok(!fleet.timeline.some((m) => m.cluster === 'sim-3'), 'sim-3 untouched by the killed run');

    const second = fleet.start(['run', plan]);
    const exit = await exitOf(second);
    assert.equal(exit.code, 0, second.stderr());
    assertAllUpgradedOnce(fleet);
    // sim-1 was complete: the second run found nothing to do there.
    assert.ok(
      !second.events.some((e) => e.event === 'pod-start' && e.cluster === 'sim-1'),
      'no pod of sim-1 started again',
    );
    await fleet.close();
  });
});
