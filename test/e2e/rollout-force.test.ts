// A changed plan while pods of the old revision are mid-flight: refused (exit 2, naming the
// revision) unless --force, which first rolls those pods back with the old revision's own flow,
// through the runner like any rollback: one rollback-start (forced) and a pod-end per pod in the
// events (so metrics and the record see them), under the plan's budget. Checked on the cluster:
// restartCount, the rollback Event, the count of image patches, the most pods not Ready at once.
// A forced rollback that fails halts the run (exit 3) naming the pod, before this revision
// touches any pod.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { embeddedOnly } from './helpers/backend.js';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';
import { NEW_ID } from './helpers/images.js';

/** Revision 1 patches two pods to an image that is never ready in time, then dies: returns them. */
async function leaveTwoMidFlight(fleet: Fleet): Promise<string[]> {
  const slow = await fleet.writePlan(
    'web.yaml',
    planYaml({ name: 'web', image: 'nginx:slow', waves: '["100%"]', concurrency: 2, maxUnavailable: 2 }),
  );
  const first = fleet.start(['run', slow]);
  await first.waitFor(
    (e) =>
      e.event === 'pod-step' &&
      e.step === 'wait-complete' &&
      first.events.filter((x) => x.event === 'pod-step' && x.step === 'wait-complete').length >= 2,
    'two pods patched',
  );
  first.child.kill('SIGKILL');
  await exitOf(first);
  const stuck = [...(await fleet.pods()).values()].filter((p) => p.specImage === 'nginx:slow').map((p) => p.name);
  assert.equal(stuck.length, 2);
  // The kubelet carries out those patches after the kill: wait until both containers run the new
  // image (restarted once), so the tests' before/after counts see only what the forced run does.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const pods = await fleet.pods();
    if (stuck.every((name) => pods.get(name)!.image.endsWith('nginx:slow'))) break;
    assert.ok(Date.now() < deadline, `the kubelet restarted ${stuck.join(', ')} on nginx:slow within 120 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return stuck;
}

describe('kwave run --force', () => {
  test('refuses a new revision while the old one has pods mid-flight; --force rolls them back through the runner, then runs', async () => {
    const fleet = await startFleet({ pods: 6 });
    try {
      const stuck = await leaveTwoMidFlight(fleet);
      // Revision 2 of the same plan: refused while those pods are mid-flight.
      const good = await fleet.writePlan(
        'web.yaml',
        planYaml({ name: 'web', image: 'nginx:1.25.3', waves: '["100%"]', concurrency: 2, maxUnavailable: 2 }),
      );
      const refused = await fleet.kwave(['run', good, '--metrics-address', 'off']);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /mid-flight under revision \S+ of this plan .*--force/);

      const beforeForce = await fleet.pods();
      await fleet.resetStats();
      const forced = fleet.start(['run', good, '--force']);
      const exit = await exitOf(forced);
      assert.equal(exit.code, 0, forced.stderr());
      // Through the runner: a forced rollback-start, then each stuck pod's rollback as a pod-end, before this revision starts.
      const names = forced.events.map((e) => e.event);
      const rb = forced.events.find((e) => e.event === 'rollback-start');
      assert.ok(rb && rb.event === 'rollback-start' && rb.forced === true && rb.pods === 2, JSON.stringify(rb));
      for (const name of stuck) {
        const end = forced.events.findIndex(
          (e) => e.event === 'pod-end' && e.pod === `default/${name}` && e.result === 'rolled-back',
        );
        assert.ok(
          end >= 0 && end < names.indexOf('rollout-start'),
          `${name} rolled back before the rollout started: ${names.join(' ')}`,
        );
      }
      // What the cluster shows, not what kwave says: each stuck pod got a rollback Event, and one
      // more container restart (back to the old image) than the others before its upgrade.
      for (const p of (await fleet.pods()).values()) {
        assert.equal(p.imageID, NEW_ID, `${p.name} runs the new image`);
        assert.equal(p.gate, 'True', `${p.name} gate open`);
        const restarts = p.restartCount - beforeForce.get(p.name)!.restartCount;
        assert.equal(restarts, stuck.includes(p.name) ? 2 : 1, `${p.name}: container restarts during the forced run`);
        const rollbacks = (await fleet.events('default', p.name)).filter((e) => e.reason === 'InPlaceRollback');
        assert.equal(rollbacks.length, stuck.includes(p.name) ? 1 : 0, `${p.name}: InPlaceRollback Events`);
      }
      // One image patch per pod, and one more for each stuck pod's rollback; the budget held throughout.
      const stats = await fleet.stats();
      assert.equal(stats.requests['patch pods'], 6 + stuck.length, JSON.stringify(stats.requests));
      assert.ok(
        (stats.maxNotReady.default ?? 0) <= 2,
        `at most maxUnavailable 2 pods not Ready at once, saw ${stats.maxNotReady.default}`,
      );
      // The record of the forced run names the rollbacks in its history.
      const record = await fleet.status(good);
      assert.equal(record.phase, 'Completed');
    } finally {
      await fleet.close();
    }
  });

  test(
    'a forced rollback that fails halts the run (exit 3) naming the pod; no pod gets the new revision',
    { skip: embeddedOnly("refusing one pod's patch uses the simulator's admission rules (POST /sim/admission)") },
    async () => {
      const fleet = await startFleet({ pods: 6 });
      try {
        const stuck = await leaveTwoMidFlight(fleet);
        const [refusedPod, other] = stuck.sort() as [string, string];
        const res = await fetch(`${fleet.sim.metricsUrl}/sim/admission`, {
          method: 'POST',
          body: JSON.stringify([{ verb: 'patch', resource: 'pods', name: refusedPod, refuse: 422 }]),
        });
        assert.equal(res.status, 200, await res.text());
        const good = await fleet.writePlan(
          'web.yaml',
          planYaml({ name: 'web', image: 'nginx:1.25.3', waves: '["100%"]', concurrency: 2, maxUnavailable: 2 }),
        );
        const before = await fleet.pods();
        await fleet.resetStats();
        const forced = fleet.start(['run', good, '--force']);
        const exit = await exitOf(forced);
        assert.equal(exit.code, 3, forced.stderr());
        const end = endOf(forced);
        assert.equal(end.phase, 'Halted');
        assert.match(
          end.message,
          new RegExp(
            `--force could not roll back default/${refusedPod} \\(left mid-flight by revision \\S+\\): PatchRefused`,
          ),
        );
        // The cluster: only the two rollback patches were tried (one refused), nothing of the new revision.
        const stats = await fleet.stats();
        assert.equal(stats.requests['patch pods'], 2, JSON.stringify(stats.requests));
        assert.equal(stats.refused['patch pods'], 1, JSON.stringify(stats.refused));
        const after = await fleet.pods();
        for (const p of after.values())
          assert.notEqual(p.specImage, 'nginx:1.25.3', `${p.name} untouched by the new revision`);
        assert.equal(after.get(refusedPod)!.specImage, 'nginx:slow', 'the refused rollback changed nothing');
        assert.equal(
          after.get(refusedPod)!.restartCount,
          before.get(refusedPod)!.restartCount,
          'no restart of the refused pod',
        );
        assert.equal(after.get(other)!.specImage, 'nginx:1.14.2', 'the other stuck pod was rolled back');
        const failedEvents = (await fleet.events('default', refusedPod)).filter(
          (e) => e.reason === 'InPlaceRollbackFailed',
        );
        assert.equal(failedEvents.length, 1, 'one InPlaceRollbackFailed Event on the refused pod');
        const okEvents = (await fleet.events('default', other)).filter((e) => e.reason === 'InPlaceRollback');
        assert.equal(okEvents.length, 1, 'one InPlaceRollback Event on the other');
        const record = await fleet.status(good);
        assert.equal(record.phase, 'Halted');
      } finally {
        await fleet.close();
      }
    },
  );
});
