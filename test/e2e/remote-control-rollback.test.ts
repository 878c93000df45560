// `kwave pause | resume | abort PLAN` against a running `kwave rollback` in another process, as
// against `kwave run` (remote-control.test.ts): through the rollout record only. A drain of 2 s
// per pod, one at a time, keeps the rollback of 8 pods going long after the request lands on a
// loaded machine. What is checked comes from the cluster: which pods were reverted while paused
// (only those in flight when the pause came) or after an abort (none), the record's phase, the
// runner's exit code — and that the next `kwave rollback` finishes what an abort left.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultDigest } from '../../src/sim/images.js';
import type { RolloutEvent } from '../../src/rollout/events.js';
import { endOf, exitOf, planYaml, startFleet, type Fleet, type RunningKwave } from './helpers/rolloutCli.js';

const OLD_ID = `docker.io/library/nginx@${defaultDigest('docker.io/library/nginx:1.14.2')}`;
const NEW_ID = `docker.io/library/nginx@${defaultDigest('docker.io/library/nginx:1.25.3')}`;
const PODS = 8;

const podsOf = (events: RolloutEvent[], kind: 'pod-start' | 'pod-end') =>
  events.flatMap((e) => (e.event === kind ? [e.pod] : []));

/** A fleet whose 8 pods a completed `kwave run` upgraded; the plan file, for the rollback. */
async function upgradedFleet(): Promise<{ fleet: Fleet; plan: string }> {
  const fleet = await startFleet({ pods: PODS, timeScale: 1 });
  const plan = await fleet.writePlan(
    'web.yaml',
    planYaml({
      name: 'web',
      waves: '["100%"]',
      concurrency: 1,
      maxUnavailable: 1,
      drainSeconds: 2,
      podTimeout: '120s',
    }),
  );
  const up = fleet.start(['run', plan]);
  const upExit = await exitOf(up);
  assert.equal(upExit.code, 0, up.stderr());
  for (const [name, p] of await fleet.pods()) assert.equal(p.imageID, NEW_ID, `${name} upgraded first`);
  await fleet.resetStats();
  return { fleet, plan };
}

/** Pods on the old image, as `default/NAME`, read from the API server now. */
async function reverted(fleet: Fleet): Promise<string[]> {
  return [...(await fleet.pods()).values()]
    .filter((p) => p.imageID === OLD_ID)
    .map((p) => `default/${p.name}`)
    .sort();
}

function inFlightFinished(run: RunningKwave, started: string[]): Promise<RolloutEvent> {
  return run.waitFor(
    () => started.every((p) => podsOf(run.events, 'pod-end').includes(p)),
    `the end of ${started.join(', ')}`,
  );
}

describe('kwave pause / resume / abort against a running kwave rollback', () => {
  test('pause: the reverts in flight finish, none starts while paused (from the cluster), phase Paused; resume finishes the rollback (exit 0)', async (t) => {
    const { fleet, plan } = await upgradedFleet();
    try {
      const back = fleet.start(['rollback', plan]);
      await back.waitFor((e) => e.event === 'pod-start', 'the first revert');
      const pause = await fleet.kwave(['pause', plan]);
      assert.equal(pause.code, 0, pause.stderr);
      assert.match(
        pause.stdout,
        /plan web: paused: the runner \(.+\) starts no new pod; pods in flight finish \(by .+\)/,
      );
      const paused = await back.waitFor((e) => e.event === 'paused', 'the rollback to pause');
      const startedBefore = podsOf(back.events.slice(0, back.events.indexOf(paused)), 'pod-start');
      assert.ok(
        startedBefore.length < PODS,
        `the pause came while pods were left to revert (${startedBefore.length} of ${PODS} started)`,
      );
      await inFlightFinished(back, startedBefore);

      const record = await fleet.status(plan);
      assert.equal(record.phase, 'Paused');
      assert.equal((record.waiting as { kind: string }).kind, 'paused');
      // From the cluster: exactly the reverts started before the pause happened.
      assert.deepEqual(await reverted(fleet), [...startedBefore].sort(), 'no revert started while paused');
      assert.equal((await fleet.stats()).requests['patch pods'], startedBefore.length);
      t.diagnostic(
        `rollback paused after ${startedBefore.length} of ${PODS} reverts started (${startedBefore.join(', ')}); 'patch pods' while paused = ${startedBefore.length}; record phase ${record.phase}`,
      );

      const resume = await fleet.kwave(['resume', plan]);
      assert.equal(resume.code, 0, resume.stderr);
      const resumed = await back.waitFor((e) => e.event === 'resumed', 'the rollback to resume');
      assert.deepEqual(
        podsOf(back.events.slice(back.events.indexOf(paused), back.events.indexOf(resumed)), 'pod-start'),
        [],
        'the runner started none while paused either',
      );
      const exit = await exitOf(back);
      assert.equal(exit.code, 0, back.stderr());
      assert.equal(endOf(back).phase, 'RolledBack');
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.imageID, OLD_ID, `${name} back on the old image`);
        assert.equal(p.restartCount, 2, `${name}: upgraded once, reverted once`);
        assert.equal(p.gate, 'True', name);
      }
      assert.equal((await fleet.status(plan)).phase, 'RolledBack');
      t.diagnostic(
        `after resume: rollback exit ${exit.code}, phase ${endOf(back).phase}, ${PODS} of ${PODS} pods on the old ImageID`,
      );
    } finally {
      await fleet.close();
    }
  });

  test('abort: the reverts in flight finish, no other pod is reverted, Halted, exit 3; the next kwave rollback finishes', async (t) => {
    const { fleet, plan } = await upgradedFleet();
    try {
      const back = fleet.start(['rollback', plan]);
      await back.waitFor((e) => e.event === 'pod-start', 'the first revert');
      const abort = await fleet.kwave(['abort', plan, '-o', 'json']);
      assert.equal(abort.code, 0, abort.stderr);
      const answer = JSON.parse(abort.stdout) as { changed: boolean; runner: string; message: string };
      assert.equal(answer.changed, true);
      assert.match(
        answer.message,
        /^aborted: the runner \(.+ pid \d+.*\) stops rolling back: no more pods are reverted, pods in flight finish, it exits 3; run kwave rollback again to finish$/,
      );

      const exit = await exitOf(back);
      assert.equal(exit.code, 3, `exit ${exit.code}\n${back.stderr()}`);
      const halt = back.events.find((e) => e.event === 'halt');
      assert.ok(halt && halt.event === 'halt' && halt.reason === 'aborted', JSON.stringify(halt));
      const end = endOf(back);
      assert.equal(end.phase, 'Halted');
      assert.match(
        end.message,
        /^rollback halted: aborted by .+ \(kwave abort at .+\); \d+ pods? rolled back, the rest still run the new image; run kwave rollback again to finish$/,
      );
      // From the cluster: the pods reverted are those the runner had started, and some are left.
      const started = podsOf(back.events, 'pod-start');
      assert.deepEqual(
        podsOf(back.events.slice(back.events.indexOf(halt)), 'pod-start'),
        [],
        'no revert started after the halt',
      );
      const back1 = await reverted(fleet);
      assert.deepEqual(back1, [...started].sort());
      assert.ok(back1.length < PODS, `pods left on the new image after the abort: ${PODS - back1.length}`);
      const record = await fleet.status(plan);
      assert.equal(record.phase, 'Halted');
      assert.equal(record.exitCode, 3);
      t.diagnostic(
        `rollback aborted: exit ${exit.code}, phase ${end.phase}, ${back1.length} of ${PODS} pods reverted (from the cluster); "${end.message}"`,
      );

      const again = fleet.start(['rollback', plan]);
      const againExit = await exitOf(again);
      assert.equal(againExit.code, 0, again.stderr());
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.imageID, OLD_ID, `${name} reverted by the second rollback`);
        assert.equal(p.restartCount, 2, `${name}: reverted once in all`);
      }
    } finally {
      await fleet.close();
    }
  });
});
