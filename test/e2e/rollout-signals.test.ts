// Ctrl-C of the real `kwave run`: the first SIGINT lets in-flight pods finish, records phase
// Paused and exits 4, and a re-run completes; a second SIGINT exits at once, leaving pods
// mid-flight that a re-run picks up, each still upgraded exactly once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet, type RunningKwave } from './helpers/rolloutCli.js';
import { NEW_ID } from './helpers/images.js';

/** Resolves once the runner said it took the first signal (so the second is a second one). */
async function firstSignalTaken(run: RunningKwave): Promise<void> {
  // A bound, not a sleep: the shared machine can take many seconds to deliver the line.
  const deadline = Date.now() + 180_000;
  while (!/no new pods start/.test(run.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  assert.match(run.stderr(), /no new pods start/);
}

const SLOW_PULL_FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
images:
  "nginx:1.14.2": {}
  "nginx:1.25.3": { pullSeconds: 150 }
workloads:
  - name: demo
    replicas: 6
    labels: { app: demo }
    containers: [{ name: nginx, image: "nginx:1.14.2" }]
`;

describe('kwave run and SIGINT', () => {
  test('Ctrl-C: in-flight pods finish, phase Paused, exit 4; the re-run completes', async () => {
    const fleet = await startFleet({ pods: 30, timeScale: 0.3 });
    try {
      const before = await fleet.pods();
      const plan = await fleet.writePlan('web.yaml', planYaml({ name: 'web', concurrency: 3, maxUnavailable: 3 }));
      await fleet.resetStats();
      const run = fleet.start(['run', plan]);
      // Into wave 3 (targets 1, 3, 15, 30), with pods in flight.
      await run.waitFor(
        (e) => e.event === 'pod-start' && run.events.filter((x) => x.event === 'pod-start').length >= 5,
        'the fifth pod start',
      );
      run.child.kill('SIGINT');
      const exit = await exitOf(run);
      assert.equal(exit.code, 4, `exit ${exit.code}\n${run.stderr()}`);
      assert.match(run.stderr(), /SIGINT: no new pods start; pods in flight finish/);
      const end = endOf(run);
      assert.equal(end.phase, 'Paused');
      assert.equal(end.exitCode, 4);

      // Every pod that started finished its upgrade; none was cut off.
      const started = run.events
        .filter((e) => e.event === 'pod-start')
        .map((e) => (e.event === 'pod-start' ? e.pod : ''));
      const ended = run.events.filter((e) => e.event === 'pod-end');
      assert.deepEqual(ended.map((e) => (e.event === 'pod-end' ? e.pod : '')).sort(), [...started].sort());
      assert.ok(
        ended.every((e) => e.event === 'pod-end' && e.result === 'upgraded'),
        JSON.stringify(ended),
      );
      assert.ok(started.length < 30, 'the rollout stopped before its end');
      const paused = await fleet.pods();
      for (const [name, p] of paused) {
        assert.equal(p.gate, 'True', `${name}: gate`);
        assert.equal(p.ready, true, `${name}: Ready`);
        assert.equal(p.restartCount, started.includes(`default/${name}`) ? 1 : 0, name);
      }
      const record = await fleet.status(plan);
      assert.equal(record.phase, 'Paused');
      assert.equal(record.lock, null);

      const again = fleet.start(['run', plan]);
      const exit2 = await exitOf(again);
      assert.equal(exit2.code, 0, `exit ${exit2.code}\n${again.stderr()}`);
      assert.equal(endOf(again).phase, 'Completed');
      // The re-run did only the rest.
      assert.equal(again.events.filter((e) => e.event === 'pod-start').length, 30 - started.length);
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.restartCount, before.get(name)!.restartCount + 1, name);
        assert.equal(p.imageID, NEW_ID, name);
        assert.equal(p.gate, 'True', name);
      }
      assert.equal((await fleet.stats()).requests['patch pods'], 30);
      assert.equal((await fleet.status(plan)).phase, 'Completed');
    } finally {
      await fleet.close();
    }
  });

  test('a second SIGINT exits at once, pods left mid-flight; a re-run completes them, each patched once', async () => {
    // The target image takes 150 s × 0.3 = 45 s to pull: once patched, every pod's flow stays in
    // flight (waiting for the kubelet) while the test sends its two signals and reads the pods
    // (a few seconds even under load; 60 s × 0.3 = 18 s was too close to that).
    // (A node that cannot act no longer serves: kwave does not start pods there, issue #16.)
    const fleet = await startFleet({ fixture: SLOW_PULL_FIXTURE, timeScale: 0.3 });
    try {
      const stuck = [...(await fleet.pods()).keys()].sort();
      assert.equal(stuck.length, 6);
      const plan = await fleet.writePlan(
        'stuck.yaml',
        planYaml({ name: 'stuck', waves: '["100%"]', concurrency: 6, maxUnavailable: 6, podTimeout: '5m' }),
      );
      await fleet.resetStats();
      const run = fleet.start(['run', plan]);
      for (const name of stuck)
        await run.waitFor(
          (e) => e.event === 'pod-step' && e.step === 'wait-complete' && e.pod === `default/${name}`,
          `${name} patched`,
        );
      run.child.kill('SIGINT');
      await firstSignalTaken(run);
      run.child.kill('SIGINT');
      // At once: the pods in flight were not waited for (they could not finish yet).
      const exit = await exitOf(run);
      assert.equal(exit.code, 4, `exit ${exit.code}\n${run.stderr()}`);
      assert.match(run.stderr(), /SIGINT again: exiting now; run the same plan again to resume/);
      assert.ok(!run.events.some((e) => e.event === 'rollout-end'));
      for (const name of stuck) {
        const p = (await fleet.pods()).get(name)!;
        assert.equal(p.gate, 'False', `${name}: left drained`);
        assert.equal(p.specImage, 'nginx:1.25.3', `${name}: patched`);
        assert.ok(p.annotation, `${name}: carries its in-place state`);
      }

      const again = fleet.start(['run', plan]);
      const exit2 = await exitOf(again);
      assert.equal(exit2.code, 0, `exit ${exit2.code}\n${again.stderr()}`);
      assert.equal(endOf(again).phase, 'Completed');
      const start = again.events.find((e) => e.event === 'rollout-start');
      assert.ok(start && start.event === 'rollout-start' && start.resumed, 'the re-run resumed the drained pods');
      assert.deepEqual(
        again.events.flatMap((e) => (e.event === 'pod-start' ? [e.pod.replace('default/', '')] : [])).sort(),
        stuck,
      );
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.restartCount, 1, name);
        assert.equal(p.imageID, NEW_ID, name);
        assert.equal(p.gate, 'True', name);
        assert.equal(p.ready, true, name);
      }
      // One image patch per pod over both runs: the re-run did not patch them again.
      assert.equal((await fleet.stats()).requests['patch pods'], 6);
    } finally {
      await fleet.close();
    }
  });
});
