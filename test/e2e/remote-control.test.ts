// `kwave pause | resume | abort PLAN` against a `kwave run` in another process, through the
// rollout record only (the commands never take the run's lease). Pulls of the new image are slow
// (3 s), and an approval gate after wave 1 (one pod) keeps the runner alive however long the
// command takes to start on a loaded machine: the request lands while wave 1's pod is in flight
// or while the runner waits for the approval. What is checked comes from the cluster: which pods
// were patched while paused (none), the record's phase and history, the runner's exit code.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RolloutEvent } from '../../src/rollout/events.js';
import { endOf, exitOf, planYaml, startFleet, type RunningKwave } from './helpers/rolloutCli.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';
import { connect } from '../../src/cluster/connect.js';
import { loadPlanFile } from '../../src/plan/load.js';
import { newRecord } from '../../src/record/record.js';
import { recordConfigMap } from '../../src/record/codec.js';

const SLOW_PULL_FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
images:
  "nginx:1.14.2": {}
  "nginx:1.25.3": { pullSeconds: 3 }
workloads:
  - name: demo
    replicas: 8
    labels: { app: demo }
    containers: [{ name: nginx, image: "nginx:1.14.2" }]
`;

const SIGN_OFF = [{ name: 'sign-off', afterWaves: [1], approval: true }];

const podsOf = (events: RolloutEvent[], kind: 'pod-start' | 'pod-end') =>
  events.flatMap((e) => (e.event === kind ? [e.pod] : []));

/** Resolves once every pod that started has ended (the pause lets pods in flight finish). */
function inFlightFinished(run: RunningKwave, started: string[]): Promise<RolloutEvent> {
  return run.waitFor(
    () => started.every((p) => podsOf(run.events, 'pod-end').includes(p)),
    `the end of ${started.join(', ')}`,
  );
}

describe('kwave pause / resume / abort from another process', () => {
  test('pause: pods in flight finish, none starts while paused (from the cluster), phase Paused with who and when; resume finishes the rollout', async (t) => {
    const fleet = await startFleet({ fixture: SLOW_PULL_FIXTURE, timeScale: 1 });
    try {
      const plan = await fleet.writePlan(
        'web.yaml',
        planYaml({
          name: 'web',
          waves: '[1, "100%"]',
          concurrency: 2,
          maxUnavailable: 2,
          podTimeout: '120s',
          gates: SIGN_OFF,
        }),
      );
      await fleet.resetStats();
      const run = fleet.start(['run', plan]);
      await run.waitFor((e) => e.event === 'pod-start', 'the first pod start');

      const pause = await fleet.kwave(['pause', plan]);
      assert.equal(pause.code, 0, pause.stderr);
      assert.match(
        pause.stdout,
        /plan web: paused: the runner \(.+\) starts no new pod; pods in flight finish \(by .+\)/,
      );
      const paused = await run.waitFor((e) => e.event === 'paused', 'the runner to pause');
      const startedBefore = podsOf(run.events.slice(0, run.events.indexOf(paused)), 'pod-start');
      assert.equal(startedBefore.length, 1, `started before the pause: ${startedBefore.join(', ')}`);
      await inFlightFinished(run, startedBefore);
      // Wave 1's gate passes; the paused runner must not start wave 2.
      const approve = await fleet.kwave(['approve', plan, '--wave', '1']);
      assert.equal(approve.code, 0, approve.stderr);
      await run.waitFor((e) => e.event === 'gate-end' && e.result === 'passed', 'the approval gate to pass');

      // Paused, from the record: phase, who (the API server's name for the caller, and where), when.
      const record = await fleet.status(plan);
      assert.equal(record.phase, 'Paused');
      const waiting = record.waiting as { kind: string; by: string };
      assert.equal(waiting.kind, 'paused');
      assert.match(waiting.by, /^kwave-admin \(.+@.+\)$/, 'who: SelfSubjectReview user (local user@host)');
      const control = record.control as { paused: { by: string; at: string }; history: { action: string }[] };
      assert.equal(control.paused.by, waiting.by);
      assert.ok(Date.parse(control.paused.at) > 0);
      assert.ok(
        (record.history as { message: string }[]).some((h) =>
          /^paused by kwave-admin \(.+\) \(kwave pause at .+\): no new pod starts/.test(h.message),
        ),
      );
      const text = await fleet.kwave(['status', plan]);
      assert.match(text.stdout, /: Paused\n/);
      assert.match(
        text.stdout,
        /paused by kwave-admin \(.+\) for (?:\d+[hms])+: no new pod starts; run `kwave resume .+web\.yaml` to go on/,
      );

      // From the cluster: exactly the pods that started before the pause were patched, each once.
      const whilePaused = await fleet.pods();
      const patched = [...whilePaused.values()]
        .filter((p) => p.restartCount > 0 || p.specImage === 'nginx:1.25.3')
        .map((p) => `default/${p.name}`);
      assert.deepEqual(patched.sort(), [...startedBefore].sort(), 'no pod started while paused');
      assert.equal((await fleet.stats()).requests['patch pods'], startedBefore.length);
      assert.deepEqual(
        podsOf(run.events.slice(run.events.indexOf(paused)), 'pod-start'),
        [],
        'the runner started none either',
      );
      t.diagnostic(
        `paused by ${waiting.by}; started before the pause: ${startedBefore.join(', ')}; patched while paused (cluster): ${patched.length - startedBefore.length}; 'patch pods' = ${startedBefore.length}; record phase ${record.phase}`,
      );

      const resume = await fleet.kwave(['resume', plan]);
      assert.equal(resume.code, 0, resume.stderr);
      assert.match(resume.stdout, /plan web: resumed: the runner \(.+\) goes on/);
      await run.waitFor((e) => e.event === 'resumed', 'the runner to resume');
      const exit = await exitOf(run);
      assert.equal(exit.code, 0, `exit ${exit.code}\n${run.stderr()}`);
      assert.equal(endOf(run).phase, 'Completed');
      t.diagnostic(`after resume: runner exit ${exit.code}, phase ${endOf(run).phase}`);
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.imageID, NEW_ID, name);
        assert.equal(p.restartCount, 1, `${name} upgraded once`);
      }
      const done = await fleet.status(plan);
      assert.equal(done.phase, 'Completed');
      assert.deepEqual(
        (done.control as { history: { action: string }[] }).history.map((h) => h.action),
        ['pause', 'resume'],
      );
      assert.ok(
        (done.history as { message: string }[]).some((h) =>
          /^resumed by kwave-admin \(.+\) \(kwave resume at .+\)$/.test(h.message),
        ),
      );
      // A second resume changes nothing and says so.
      const again = await fleet.kwave(['resume', plan]);
      assert.equal(again.code, 0);
      assert.match(again.stdout, /not paused: nothing to resume/);
    } finally {
      await fleet.close();
    }
  });

  test('abort: the runner halts as on a failure, applies rollback: all, exits 3; with no runner an abort is refused (exit 2)', async (t) => {
    const fleet = await startFleet({ fixture: SLOW_PULL_FIXTURE, timeScale: 1 });
    try {
      const plan = await fleet.writePlan(
        'web.yaml',
        planYaml({
          name: 'web',
          waves: '[1, "100%"]',
          concurrency: 2,
          maxUnavailable: 2,
          podTimeout: '120s',
          rollback: 'all',
          gates: SIGN_OFF,
        }),
      );
      const run = fleet.start(['run', plan]);
      await run.waitFor((e) => e.event === 'pod-start', 'the first pod start');

      const abort = await fleet.kwave(['abort', plan, '-o', 'json']);
      assert.equal(abort.code, 0, abort.stderr);
      const answer = JSON.parse(abort.stdout) as { action: string; changed: boolean; runner: string; by: string };
      assert.equal(answer.action, 'abort');
      assert.equal(answer.changed, true);
      assert.match(answer.runner, / pid \d+/, 'addressed to the runner holding the lease');

      const exit = await exitOf(run);
      assert.equal(exit.code, 3, `exit ${exit.code}\n${run.stderr()}`);
      const halt = run.events.find((e) => e.event === 'halt');
      assert.ok(halt && halt.event === 'halt' && halt.reason === 'aborted', JSON.stringify(halt));
      assert.match(halt.message, /^aborted by kwave-admin \(.+@.+\) \(kwave abort at .+\)$/);
      assert.equal(endOf(run).phase, 'RolledBack');
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.imageID, OLD_ID, `${name} back on the old image`);
        assert.equal(p.gate, 'True', `${name} gate reopened`);
      }
      const record = await fleet.status(plan);
      assert.equal(record.phase, 'RolledBack');
      assert.equal(record.exitCode, 3);
      const control = record.control as { abort: { holder: string }; history: { action: string; by: string }[] };
      assert.equal(control.abort.holder, answer.runner);
      assert.deepEqual(
        control.history.map((h) => h.action),
        ['abort'],
      );

      t.diagnostic(
        `abort: runner exit ${exit.code}, halt "${halt.message}", record phase ${record.phase}, control.abort.holder ${control.abort.holder}`,
      );
      const none = await fleet.kwave(['abort', plan]);
      assert.equal(none.code, 2, none.stdout + none.stderr);
      assert.match(none.stderr, /no runner holds the lease of this plan: nothing to abort/);
      // An aborted revision stays halted: the next plain run upgrades nothing (exit 3); `--retry`
      // runs it again, not hit by the last run's abort (its gate approved ahead).
      await fleet.resetStats();
      const plain = await fleet.kwave(['run', plan]);
      assert.equal(plain.code, 3, plain.stderr);
      assert.match(plain.stderr, /stays halted: no pod is upgraded; run it with --retry/);
      assert.equal((await fleet.stats()).requests['patch pods'] ?? 0, 0, 'no pod patched by the plain re-run');
      assert.equal((await fleet.kwave(['approve', plan, '--wave', '1'])).code, 0);
      const next = fleet.start(['run', plan, '--retry']);
      assert.equal((await exitOf(next)).code, 0, next.stderr());
    } finally {
      await fleet.close();
    }
  });
  test('a record of an earlier kwave: the approval and pause it holds itself no longer count; the run says so, drops them, and waits for kwave approve', async () => {
    const fleet = await startFleet({ fixture: SLOW_PULL_FIXTURE, timeScale: 0.3 });
    const cluster = connect({ kubeconfig: fleet.kubeconfig });
    try {
      const plan = await fleet.writePlan(
        'web.yaml',
        planYaml({ name: 'web', waves: '[1, "100%"]', concurrency: 2, maxUnavailable: 2, gates: SIGN_OFF }),
      );
      const loaded = await loadPlanFile(plan);
      assert.ok(loaded.ok);
      const revision = loaded.plan.revision;
      // The record as the previous kwave left it: decisions under the record's own keys.
      const old = recordConfigMap(
        'default',
        newRecord({ plan: 'web', revision, planText: '', holder: 'old@host pid 1', now: new Date().toISOString() }),
      );
      const pause = { action: 'pause', by: 'bob@desk', at: new Date().toISOString(), revision };
      old.data!['approval.wave-1'] = JSON.stringify({ by: 'bob@desk', at: pause.at, revision });
      old.data!['control.json'] = JSON.stringify({ paused: pause, history: [pause] });
      await cluster.createConfigMap('default', old);
      const before = await fleet.status(plan);
      assert.equal((before.approvals as Record<string, { by: string }>)['1']?.by, 'bob@desk', 'still read');

      const run = fleet.start(['run', plan]);
      await run.waitFor((e) => e.event === 'gate-approval-wait', 'the approval wait after wave 1');
      assert.match(
        run.stderr(),
        /the rollout record holds approvals or pause\/abort requests written by an earlier kwave \(approval of wave 1, a pause\); they no longer count and leave the record: people's decisions are read from default\/kwave-web\.control only/,
      );
      assert.ok(!run.events.some((e) => e.event === 'paused'), 'the old pause holds nothing back');
      const record = await cluster.getConfigMap('default', 'kwave-web');
      assert.deepEqual(Object.keys(record.data ?? {}).sort(), ['plan.yaml', 'status.json'], 'dropped from the record');
      const approved = await fleet.kwave(['approve', plan]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.equal((await exitOf(run)).code, 0, run.stderr());
      const after = await fleet.status(plan);
      assert.match((after.approvals as Record<string, { by: string }>)['1']!.by, /^kwave-admin \(/);
    } finally {
      cluster.close();
      await fleet.close();
    }
  });
});
