// Crash safety of the real `kwave run`: SIGKILL at five moments across one rollout of 40 pods,
// restarted each time; the rollout completes with every pod upgraded exactly once (restartCount
// +1 exactly, one image patch per pod as the cluster counts them) and no gate left closed.
//
// Embedded backend: each kill lands exactly where the test names it. The simulator writes a
// chosen request and holds its answer (POST /sim/admission `hold`), the test waits until it is
// held, checks on the cluster that the write is there, and kills:
//   1. the canary's gate closed, its answer held;
//   2. the canary's image patch written, its answer held;
//   3. waiting for approval after wave 1 (an approval gate: kwave waits until `kwave approve`);
//   4. wave 2's third image patch written, its answer held, while its other pods are in flight;
//   5. in wave 3 with five image patches written and unanswered: five pods drained at once (the
//      budget).
// Real backend: kube-apiserver has no hook that holds an answer, so the kills land at seeded
// event indexes instead (where each lands in a pod's flow varies with the machine); the
// outcome is checked the same way.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AdmissionRule } from '../../src/sim/apiserver/admission.js';
import { realSleep } from '../../src/sleep.js';
import {
  endOf,
  exitOf,
  planYaml,
  seededRandom,
  startFleet,
  type Fleet,
  type PodView,
  type RunningKwave,
} from './helpers/rolloutCli.js';
import { BACKEND } from './helpers/backend.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

const PODS = 40;
const BOUND_MS = 180_000;
// KWAVE_KILL_SEED explores other moments on the real backend; the suite runs with the fixed one.
const SEED = Number(process.env.KWAVE_KILL_SEED ?? 20_240_605);

async function admission(fleet: Fleet, rules: AdmissionRule[]): Promise<void> {
  const res = await fetch(`${fleet.sim.metricsUrl}/sim/admission`, { method: 'POST', body: JSON.stringify(rules) });
  assert.equal(res.status, 200, await res.text());
}

/** Resolves once `reached` says so (a bound, not a sleep); fails with `what()` if the run ends first or the bound passes. */
async function until(run: RunningKwave, reached: () => Promise<boolean>, what: () => string): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while (!(await reached())) {
    if (run.child.exitCode !== null || Date.now() > deadline) throw new Error(`${what()}\n${run.stderr()}`);
    await realSleep(20);
  }
}

/** Resolves once `count` answers are held; fails if the run ends first. */
async function heldAnswers(fleet: Fleet, run: RunningKwave, count: number): Promise<void> {
  let held = 0;
  await until(
    run,
    async () => {
      ({ held } = (await (await fetch(`${fleet.sim.metricsUrl}/sim/admission`)).json()) as { held: number });
      assert.ok(held <= count, `more answers held than asked for: ${held}`);
      return held === count;
    },
    () => `${count} held answers never came (${held})\n${run.stdout().slice(-2000)}`,
  );
}

/**
 * Resolves once the plan's record says it waits for an approval. The run prints
 * `gate-approval-wait` as that record write goes out: a kill at once may land before the write,
 * and `kwave approve`, which reads the record, then finds no wave waiting.
 */
async function approvalRecorded(fleet: Fleet, run: RunningKwave, file: string): Promise<void> {
  let status: Record<string, unknown> = {};
  await until(
    run,
    async () => {
      status = await fleet.status(file);
      return (status.waiting as { kind?: unknown } | undefined)?.kind === 'approval';
    },
    () => `the record never showed the approval wait: ${JSON.stringify(status)}`,
  );
}

async function kill(run: RunningKwave, n: number): Promise<void> {
  run.child.kill('SIGKILL');
  const exit = await exitOf(run);
  assert.equal(exit.signal, 'SIGKILL', `run ${n} ended before its kill (exit ${exit.code})\n${run.stderr()}`);
  assert.ok(!run.events.some((e) => e.event === 'rollout-end'), `run ${n} had finished`);
}

const count = (pods: Map<string, PodView>, ok: (p: PodView) => boolean) => [...pods.values()].filter(ok).length;

async function checkCompleted(fleet: Fleet, plan: string, before: Map<string, PodView>): Promise<string> {
  const last = fleet.start(['run', plan]);
  const exit = await exitOf(last);
  assert.equal(exit.code, 0, `exit ${exit.code}\n${last.stderr()}\n${last.stdout().slice(-2000)}`);
  assert.equal(endOf(last).phase, 'Completed');
  const start = last.events.find((e) => e.event === 'rollout-start');
  assert.ok(start && start.event === 'rollout-start' && start.resumed, 'the last run resumed');
  const now = await fleet.pods();
  assert.equal(now.size, PODS);
  for (const [name, p] of now) {
    const was = before.get(name)!;
    assert.equal(p.restartCount, was.restartCount + 1, `${name}: restartCount`);
    assert.equal(p.specImage, 'nginx:1.25.3', name);
    assert.equal(p.imageID, NEW_ID, name);
    assert.equal(p.gate, 'True', `${name}: gate`);
    assert.equal(p.ready, true, `${name}: Ready`);
  }
  const stats = await fleet.stats();
  // One image patch per pod over all six processes, none accepted twice (restartCount + 1 above is
  // the exact check). The embedded backend's kills land after a write: one sent a pod. On the real
  // backend, seeded kills blur sent patches into accepted and refused: a run killed just after
  // sending its patch, and the restarted run reading the pod before that patch was written, sends
  // its own with the old resourceVersion and gets 409 Conflict; and kube-apiserver writes the
  // patch of a client gone before the answer, yet logs the request with an error status (its
  // timeout filter answers a cancelled request; the handler finishes). Seen under load: 41 sent, 2
  // refused, 40 pods. So: at least one sent a pod, at most one accepted a pod, at most one extra a
  // pod in flight at a kill (5 kills, concurrency 5).
  const sent = stats.requests['patch pods'] ?? 0;
  const refused = stats.refused['patch pods'] ?? 0;
  if (BACKEND === 'embedded') assert.equal(sent, PODS, JSON.stringify(stats.requests));
  assert.ok(sent >= PODS && sent - refused <= PODS && sent - PODS <= 5 * 5, JSON.stringify(stats));
  assert.ok((stats.maxNotReady.default ?? 0) <= 5, `maxNotReady ${stats.maxNotReady.default}`);
  assert.equal((await fleet.status(plan)).phase, 'Completed');
  return `patch pods ${sent} (${refused} refused), patch pods/status ${stats.requests['patch pods/status']}, maxNotReady ${stats.maxNotReady.default}`;
}

describe('kwave run: SIGKILL at five moments, restarted each time', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ pods: PODS, timeScale: 0.3 });
  });
  after(async () => fleet?.close());

  const plan = (gates: string) =>
    fleet.writePlan(
      'crashy.yaml',
      planYaml({ name: 'crashy', waves: '[1, "10%", "50%", "100%"]', concurrency: 5, maxUnavailable: 5, gates }),
    );

  test(
    'each kill between a write and its answer, or in the approval wait; every pod upgraded exactly once',
    {
      skip:
        BACKEND === 'real'
          ? "embedded backend only: holding an answer needs the simulator's admission hold (the real pass runs the seeded-index test below)"
          : false,
    },
    async () => {
      const before = await fleet.pods();
      const file = await plan('    - { name: sign-off, afterWaves: [1], approval: true }\n');
      await fleet.resetStats();

      // 1. The canary's gate closed, its answer held.
      await admission(fleet, [{ verb: 'patch', resource: 'pods/status', hold: true, times: 1 }]);
      let run = fleet.start(['run', file]);
      await heldAnswers(fleet, run, 1);
      let pods = await fleet.pods();
      assert.equal(
        count(pods, (p) => p.gate === 'False'),
        1,
        'one gate closed',
      );
      assert.equal(
        count(pods, (p) => p.specImage !== 'nginx:1.14.2'),
        0,
        'nothing patched',
      );
      await kill(run, 1);

      // 2. The canary's image patch written, its answer held.
      await admission(fleet, [{ verb: 'patch', resource: 'pods', hold: true, times: 1 }]);
      run = fleet.start(['run', file]);
      await heldAnswers(fleet, run, 1);
      pods = await fleet.pods();
      assert.equal(
        count(pods, (p) => p.specImage === 'nginx:1.25.3'),
        1,
        'the canary patched',
      );
      assert.equal(
        count(pods, (p) => p.gate === 'False'),
        1,
      );
      await kill(run, 2);
      await admission(fleet, []);

      // 3. Waiting for approval after wave 1.
      run = fleet.start(['run', file]);
      await run.waitFor((e) => e.event === 'gate-approval-wait', 'the approval wait after wave 1');
      await approvalRecorded(fleet, run, file);
      pods = await fleet.pods();
      assert.equal(
        count(pods, (p) => p.imageID === NEW_ID && p.gate === 'True'),
        1,
        'wave 1 done',
      );
      assert.equal(
        count(pods, (p) => p.imageID === OLD_ID && p.restartCount === 0),
        PODS - 1,
        'the rest untouched',
      );
      await kill(run, 3);
      const approved = await fleet.kwave(['approve', file]);
      assert.equal(approved.code, 0, approved.stderr);

      // 4. Wave 2 (10%: 3 more pods): its third image patch written, its answer held.
      await admission(fleet, [{ verb: 'patch', resource: 'pods', hold: true, skip: 2, times: 1 }]);
      run = fleet.start(['run', file]);
      await heldAnswers(fleet, run, 1);
      pods = await fleet.pods();
      assert.equal(
        count(pods, (p) => p.specImage === 'nginx:1.25.3'),
        4,
        'the canary and wave 2 patched, nothing of wave 3',
      );
      await kill(run, 4);

      // 5. Wave 3: five image patches written and unanswered, five pods out of service at once.
      await admission(fleet, [{ verb: 'patch', resource: 'pods', hold: true }]);
      run = fleet.start(['run', file]);
      await heldAnswers(fleet, run, 5);
      pods = await fleet.pods();
      assert.equal(
        count(pods, (p) => p.specImage === 'nginx:1.25.3'),
        4 + 5,
      );
      assert.equal(
        count(pods, (p) => p.gate === 'False'),
        5,
        'five drained: the budget',
      );
      await kill(run, 5);
      await admission(fleet, []);

      const figures = await checkCompleted(fleet, file, before);
      console.log(`# held kills: ${figures}`);
    },
  );

  test(
    'at 5 seeded event indexes; every pod upgraded exactly once',
    {
      skip:
        BACKEND === 'embedded' ? 'real backend only: the embedded pass kills at held answers (the test above)' : false,
    },
    async () => {
      const before = await fleet.pods();
      const file = await plan('    - { name: soak, afterWaves: [1], pause: 1s }\n');
      await fleet.resetStats();
      const random = seededRandom(SEED);
      const moments: string[] = [];
      for (let i = 0; i < 5; i++) {
        const k = 1 + Math.floor(random() * 40);
        const run = fleet.start(['run', file]);
        const at = await run.waitFor((e) => run.events.indexOf(e) === k - 1, `event ${k} of run ${i + 1}`);
        await kill(run, i + 1);
        moments.push(`${k}:${at.event}${'step' in at ? `/${at.step}` : ''}`);
      }
      const figures = await checkCompleted(fleet, file, before);
      console.log(`# kill moments (event k:type): ${moments.join(', ')}; ${figures}`);
    },
  );
});
