// Plans across clusters (spec.clusters), through the real `kwave` binary against two and three
// clusters in one kubeconfig. The order of pod upgrades is read from the clusters themselves (each
// cluster's watch of its pods, and /sim/stats), never from kwave's output:
// - sequential: every pod of sim-1 is done before any pod of sim-2 is touched;
// - interleaved: wave 1 in every cluster before wave 2 anywhere, one step at a time;
// - a halt in sim-2 leaves sim-3 untouched (no pod write in its /sim/stats) and the rollback
//   policy (`all`) reverts sim-1, which had changed;
// - a SIGKILL half-way through sim-2, then the same plan again: every pod upgraded exactly once
//   (restartCount 1), from the clusters' own state.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { exitOf, planYaml, type PlanOptions } from './helpers/rolloutCli.js';
import { startMultiFleet, type MultiFleet, type PodMoment } from './helpers/multiFleet.js';
import { orderSteps } from '../../src/rollout/clusterOrder.js';

/** The base plan YAML with spec.clusters (contexts sim-1 … sim-N) and the order appended. */
function multiPlan(name: string, clusters: string[], order: 'sequential' | 'interleaved', extra: Partial<PlanOptions> = {}): string {
  const base = planYaml({ name, waves: '[1, "100%"]', concurrency: 1, maxUnavailable: 1, ...extra });
  return base + stringify({ clusters: clusters.map((c) => ({ name: c, context: c })), clusterOrder: order }, { lineWidth: 0 }).replace(/^/gm, '  ').replace(/ +$/, '');
}

/** Pods demo-0 … by name: wave 1 is demo-0, wave 2 the rest (waves [1, "100%"], order name). */
const waveOf = (pod: string) => (pod === 'demo-0' ? 1 : 2);

/** Each pod's moments, keyed `cluster:wave`. */
function byStep(timeline: readonly PodMoment[]): Map<string, PodMoment[]> {
  const out = new Map<string, PodMoment[]>();
  for (const m of timeline) {
    const key = `${m.cluster}:${waveOf(m.pod)}`;
    out.set(key, [...(out.get(key) ?? []), m]);
  }
  return out;
}

/** Every moment of each step comes after every moment of the step before it. */
function assertStepsInOrder(timeline: readonly PodMoment[], expected: string[]): void {
  const steps = byStep(timeline);
  assert.deepEqual([...steps.keys()].sort(), [...expected].sort(), 'every step happened');
  for (let i = 1; i < expected.length; i++) {
    const prev = steps.get(expected[i - 1]!)!;
    const next = steps.get(expected[i]!)!;
    const lastOfPrev = Math.max(...prev.map((m) => m.seq));
    const firstOfNext = Math.min(...next.map((m) => m.seq));
    assert.ok(lastOfPrev < firstOfNext, `${expected[i - 1]} ended (seq ${lastOfPrev}) before ${expected[i]} began (seq ${firstOfNext}); timeline ${JSON.stringify(timeline)}`);
  }
}

function assertAllUpgradedOnce(fleet: MultiFleet): void {
  for (const [i, name] of fleet.names.entries()) {
    for (const [pod, v] of fleet.pods(i)) {
      assert.equal(v.image, 'docker.io/library/nginx:1.25.3', `${name} ${pod} runs the new image`);
      assert.equal(v.restartCount, 1, `${name} ${pod} was upgraded exactly once`);
      assert.equal(v.gate, 'True', `${name} ${pod} gate open`);
      assert.ok(v.ready, `${name} ${pod} Ready`);
    }
  }
}

describe('kwave run: a plan across clusters', () => {
  const fleets: MultiFleet[] = [];
  after(async () => {
    for (const f of fleets) await f.close();
  });

  test('two clusters, sequential: every pod of sim-1 before any of sim-2; plan and status show both', async () => {
    const fleet = await startMultiFleet([{ pods: 3 }, { pods: 3 }]);
    fleets.push(fleet);
    const plan = await fleet.writePlan('seq.yaml', multiPlan('multi-seq', fleet.names, 'sequential'));

    const dry = await fleet.kwave(['plan', plan, '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    const lines = dry.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(lines.slice(0, 2).map((l) => [l.cluster, l.toUpgrade]), [['sim-1', 3], ['sim-2', 3]]);
    assert.deepEqual((lines[2]!.order as { cluster: string; wave: number; pods: number }[]).map((s) => `${s.cluster}:${s.wave}:${s.pods}`), ['sim-1:1:1', 'sim-1:2:2', 'sim-2:1:1', 'sim-2:2:2']);

    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 0, run.stderr());
    assertStepsInOrder(fleet.timeline, ['sim-1:1', 'sim-1:2', 'sim-2:1', 'sim-2:2']);
    assertAllUpgradedOnce(fleet);
    // Each cluster's run is reported as its own; the events say which cluster.
    const ends = run.events.filter((e) => e.event === 'rollout-end');
    assert.deepEqual(ends.map((e) => e.cluster).sort(), ['sim-1', 'sim-2']);
    assert.ok(ends.every((e) => e.event === 'rollout-end' && e.phase === 'Completed'));

    const status = await fleet.kwave(['status', plan, '-o', 'json']);
    assert.equal(status.code, 0, status.stderr);
    const records = status.stdout.trim().split('\n').map((l) => JSON.parse(l) as { cluster: string; phase: string });
    assert.deepEqual(records.map((r) => [r.cluster, r.phase]), [['sim-1', 'Completed'], ['sim-2', 'Completed']]);
    const text = await fleet.kwave(['status', plan]);
    assert.match(text.stdout, /== cluster sim-1 \(context sim-1\) ==/);
    assert.match(text.stdout, /== cluster sim-2 \(context sim-2\) ==/);
  });

  test('three clusters, interleaved: wave 1 in every cluster before wave 2 anywhere, one step at a time', async () => {
    const fleet = await startMultiFleet([{ pods: 3 }, { pods: 3 }, { pods: 3 }]);
    fleets.push(fleet);
    const plan = await fleet.writePlan('inter.yaml', multiPlan('multi-inter', fleet.names, 'interleaved'));
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 0, run.stderr());
    const expected = orderSteps('interleaved', fleet.names.map((name) => ({ name, waves: [1, 2] }))).map((s) => `${s.cluster}:${s.wave}`);
    assert.deepEqual(expected, ['sim-1:1', 'sim-2:1', 'sim-3:1', 'sim-1:2', 'sim-2:2', 'sim-3:2']);
    assertStepsInOrder(fleet.timeline, expected);
    assertAllUpgradedOnce(fleet);
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
    const plan = await fleet.writePlan('halt.yaml', multiPlan('multi-halt', fleet.names, 'sequential', { rollback: 'all', podTimeout: '60s' }));
    await fleet.resetStats(2);
    const before3 = fleet.pods(2);

    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 3, run.stderr());

    // sim-3: not one pod write, no pod changed.
    const stats3 = await fleet.stats(2);
    for (const key of Object.keys(stats3.requests)) assert.doesNotMatch(key, /^(patch|update|create|delete) pods/, `sim-3 saw ${key}`);
    assert.deepEqual([...fleet.pods(2).values()].map((p) => [p.name, p.restartCount, p.image]), [...before3.values()].map((p) => [p.name, p.restartCount, p.image]));
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
    const records = status.stdout.trim().split('\n').map((l) => JSON.parse(l) as { cluster: string; phase: string; message?: string });
    assert.deepEqual(records.map((r) => [r.cluster, r.phase]), [['sim-1', 'RolledBack'], ['sim-2', 'RolledBack'], ['sim-3', 'Halted']]);
    const end = run.events.find((e) => e.event === 'rollout-end' && e.cluster === 'sim-3');
    assert.ok(end && end.event === 'rollout-end');
    assert.match(end.message, /cluster sim-2 halted/);
  });

  test('a SIGKILL half-way through the second cluster, then the same plan again: every pod upgraded exactly once', async () => {
    const fleet = await startMultiFleet([{ pods: 3 }, { pods: 4 }, { pods: 3 }]);
    fleets.push(fleet);
    const plan = await fleet.writePlan('resume.yaml', multiPlan('multi-resume', fleet.names, 'sequential', { waves: '[1, "50%", "100%"]' }));
    const first = fleet.start(['run', plan]);
    await fleet.waitForTimeline((t) => t.filter((m) => m.cluster === 'sim-2' && m.what === 'restarted').length >= 2, 'two pods of sim-2 restarted');
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
    assert.ok(!second.events.some((e) => e.event === 'pod-start' && e.cluster === 'sim-1'), 'no pod of sim-1 started again');
  });
});
