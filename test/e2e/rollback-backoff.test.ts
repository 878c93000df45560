// A rollback onto an image the pods ran seconds ago, through the real `kwave run`: upgrade
// nginx:1.14.2 → nginx:1.25.3, then 1.25.3 → nginx:broken (the pull fails) with `rollback: failed`.
//
// The real kubelet keys its restart back-off by the container's spec hash (docs/sim.md, "Where the
// simulated kubelet differs from the real one"): 1.25.3's spec started moments ago, so when the
// rollback restores it the kubelet reports `CrashLoopBackOff` for a while before it starts it again,
// though no container of that spec has crashed since the patch. That back-off is the kubelet's
// pause before a start, not a crash of the rolled-back image (docs/rollout.md, the completion
// rule): every pod must come back on 1.25.3, gate True, Ready, and the run end in exit 3 (halted,
// failed pods rolled back).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';
import { NEW_ID } from './helpers/images.js';

const PODS = 3;
/** One wave of every pod, all in flight at once: each one fails its pull, each one is rolled back. */
const STRATEGY = { waves: '["100%"]', concurrency: PODS, maxUnavailable: PODS, podTimeout: '60s' };

describe('kwave run: rolling back to the image the pods ran seconds ago', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ pods: PODS });
  });
  after(async () => fleet?.close());

  test('every pod comes back on the previous image, gate True, Ready; exit 3', async () => {
    const upgrade = await fleet.writePlan('up.yaml', planYaml({ name: 'up', image: 'nginx:1.25.3', ...STRATEGY }));
    const up = fleet.start(['run', upgrade]);
    const upExit = await exitOf(up);
    assert.equal(upExit.code, 0, `upgrade: exit ${upExit.code}\n${up.stderr()}\n${up.stdout().slice(-2000)}`);
    const upgraded = await fleet.pods();
    assert.equal(upgraded.size, PODS);
    for (const [name, p] of upgraded) assert.equal(p.imageID, NEW_ID, name);

    const broken = await fleet.writePlan(
      'broken.yaml',
      planYaml({ name: 'broken', image: 'nginx:broken', ...STRATEGY, maxFailed: 0, rollback: 'failed' }),
    );
    const run = fleet.start(['run', broken]);
    const exit = await exitOf(run);
    const output = `${run.stderr()}\n${run.stdout().slice(-4000)}`;
    assert.equal(exit.code, 3, `exit ${exit.code}\n${output}`);

    const ends = run.events.flatMap((e) => (e.event === 'pod-end' ? [`${e.pod} ${e.result} ${e.message}`] : []));
    const rolledBack = ends.filter((e) => / rolled-back /.test(e));
    assert.equal(rolledBack.length, PODS, `every pod rolled back:\n${ends.join('\n')}`);
    const end = endOf(run);
    assert.equal(end.phase, 'Halted');
    assert.match(end.message, /rolled back the failed pods/);

    for (const [name, p] of await fleet.pods()) {
      assert.equal(p.specImage, 'nginx:1.25.3', name);
      assert.equal(p.imageID, NEW_ID, name);
      assert.equal(p.gate, 'True', `${name}: gate`);
      assert.equal(p.ready, true, `${name}: Ready`);
    }
    const failedRollbacks = (await fleet.events('default')).filter(
      (e) => (e as unknown as { reason: string }).reason === 'InPlaceRollbackFailed',
    );
    assert.deepEqual(
      failedRollbacks.map((e) => e.message),
      [],
    );
  });
});
