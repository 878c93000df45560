// Plans across clusters (spec.clusters), through the real `kwave` binary against two and three
// clusters in one kubeconfig, in both orders. The order of pod upgrades is read from the clusters
// themselves (each cluster's watch of its pods), never from kwave's output:
// - sequential: every pod of sim-1 is done before any pod of sim-2 is touched;
// - interleaved: wave 1 in every cluster before wave 2 anywhere, one step at a time.
// The halt and the resume after a SIGKILL are in multi-cluster-halt.test.ts.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { exitOf } from './helpers/rolloutCli.js';
import {
  assertAllUpgradedOnce,
  assertStepsInOrder,
  multiPlan,
  startMultiFleet,
  type MultiFleet,
} from './helpers/multiFleet.js';
import { orderSteps } from '../../src/rollout/clusterOrder.js';

describe('kwave run: a plan across clusters', () => {
  const fleets: MultiFleet[] = [];
  // Each test closes its clusters at its end; this closes them after a failure too.
  after(async () => {
    for (const f of fleets) await f.close();
  });

  test('two clusters, sequential: every pod of sim-1 before any of sim-2; plan and status show both', async () => {
    const fleet = await startMultiFleet([{ pods: 3 }, { pods: 3 }]);
    fleets.push(fleet);
    const plan = await fleet.writePlan('seq.yaml', multiPlan('multi-seq', fleet.names, 'sequential'));

    const dry = await fleet.kwave(['plan', plan, '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    const lines = dry.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.slice(0, 2).map((l) => [l.cluster, l.toUpgrade]),
      [
        ['sim-1', 3],
        ['sim-2', 3],
      ],
    );
    assert.deepEqual(
      (lines[2]!.order as { cluster: string; wave: number; pods: number }[]).map(
        (s) => `${s.cluster}:${s.wave}:${s.pods}`,
      ),
      ['sim-1:1:1', 'sim-1:2:2', 'sim-2:1:1', 'sim-2:2:2'],
    );

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
    const records = status.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { cluster: string; phase: string });
    assert.deepEqual(
      records.map((r) => [r.cluster, r.phase]),
      [
        ['sim-1', 'Completed'],
        ['sim-2', 'Completed'],
      ],
    );
    const text = await fleet.kwave(['status', plan]);
    assert.match(text.stdout, /== cluster sim-1 \(context sim-1\) ==/);
    assert.match(text.stdout, /== cluster sim-2 \(context sim-2\) ==/);
    await fleet.close();
  });

  test('three clusters, interleaved: wave 1 in every cluster before wave 2 anywhere, one step at a time', async () => {
    const fleet = await startMultiFleet([{ pods: 3 }, { pods: 3 }, { pods: 3 }]);
    fleets.push(fleet);
    const plan = await fleet.writePlan('inter.yaml', multiPlan('multi-inter', fleet.names, 'interleaved'));
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 0, run.stderr());
    const expected = orderSteps(
      'interleaved',
      fleet.names.map((name) => ({ name, waves: [1, 2] })),
    ).map((s) => `${s.cluster}:${s.wave}`);
    assert.deepEqual(expected, ['sim-1:1', 'sim-2:1', 'sim-3:1', 'sim-1:2', 'sim-2:2', 'sim-3:2']);
    assertStepsInOrder(fleet.timeline, expected);
    assertAllUpgradedOnce(fleet);
    await fleet.close();
  });
});
