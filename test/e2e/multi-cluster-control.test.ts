// `--cluster NAME` on `kwave pause | resume | abort | status | approve` for a multi-cluster plan,
// against `kwave sim --clusters 2` as a user starts it (one process, one kubeconfig with contexts
// sim-1 and sim-2) and a `kwave run` of the plan in another process. Default: every cluster of the
// plan; an unknown name, --cluster on a plan of one cluster, and --context on a plan that names
// its clusters are usage errors (exit 2). What is checked comes from the clusters (each one's
// /sim/stats and pods) and the records, besides the runner's events and exit code.
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { RolloutEvent } from '../../src/rollout/events.js';
import type { StatsSnapshot } from '../../src/sim/stats.js';
import { embeddedOnly } from './helpers/backend.js';
import { BIN, CHILD_LIMITS, ROOT } from './helpers/kwaveBin.js';
import { multiPlan } from './helpers/multiFleet.js';
import { endOf, exitOf, follow, planYaml, type CliResult, type RunningKwave } from './helpers/rolloutCli.js';

const skip = embeddedOnly('`kwave sim --clusters` serves embedded clusters only');
const CLUSTERS = ['sim-1', 'sim-2'];
const inCluster = (name: string) => (e: RolloutEvent) => (e as { cluster?: string }).cluster === name;

describe(
  '--cluster on the control and status commands of a multi-cluster plan (kwave sim --clusters 2)',
  { skip },
  () => {
    let dir: string;
    let kubeconfig: string;
    let sim: ReturnType<typeof spawn>;
    const metricsUrls: string[] = [];
    const env = { ...process.env, KUBECONFIG: '' };

    const kwave = (args: string[]): Promise<CliResult> =>
      new Promise((resolve, reject) => {
        execFile(
          process.execPath,
          [BIN, ...args, '--kubeconfig', kubeconfig],
          { cwd: ROOT, env, ...CHILD_LIMITS },
          (err, stdout, stderr) => {
            if (err && typeof err.code !== 'number') return reject(err);
            resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
          },
        );
      });
    const start = (args: string[]): RunningKwave => {
      const child = spawn(
        process.execPath,
        [BIN, ...args, '--kubeconfig', kubeconfig, '--metrics-address', 'off', '-o', 'json'],
        { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], ...CHILD_LIMITS },
      );
      return follow(child, () => undefined);
    };
    const stats = async (i: number) => (await (await fetch(`${metricsUrls[i]}/sim/stats`)).json()) as StatsSnapshot;
    const images = async (context: string) => {
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      kc.setCurrentContext(context);
      const pods = await kc
        .makeApiClient(CoreV1Api)
        .listNamespacedPod({ namespace: 'default', labelSelector: 'app=demo' });
      return pods.items.map((p) => p.spec!.containers[0]!.image).sort();
    };
    const statusLines = async (args: string[]) => {
      const r = await kwave(['status', ...args, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              cluster: string;
              phase: string;
              control?: { paused?: unknown; abort?: { holder: string } };
            },
        );
    };

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kwave-multi-control-'));
      kubeconfig = join(dir, 'kubeconfig');
      sim = spawn(
        process.execPath,
        [BIN, 'sim', '--clusters', '2', '--pods', '3', '--kubeconfig-out', kubeconfig, '--time-scale', '0.3'],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      sim.stdout!.setEncoding('utf8');
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`kwave sim --clusters 2 did not start: ${out}`)), 120_000);
        sim.stdout!.on('data', (chunk: string) => {
          out += chunk;
          if (/kubeconfig written to /.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
        sim.on('exit', (code) => reject(new Error(`kwave sim exited ${code}: ${out}`)));
      });
      for (const name of CLUSTERS)
        metricsUrls.push(new RegExp(`^${name}: metrics on (http://127\\.0\\.0\\.1:\\d+)$`, 'm').exec(out)![1]!);
    });

    after(async () => {
      sim?.kill('SIGTERM');
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    test('unknown names, --cluster on a plan of one cluster, --context on a multi-cluster plan: exit 2 naming the clusters', async () => {
      const multi = join(dir, 'names.yaml');
      await writeFile(multi, multiPlan('names', CLUSTERS, 'sequential'));
      const one = join(dir, 'one.yaml');
      await writeFile(one, planYaml({ name: 'one' }));
      for (const cmd of ['pause', 'resume', 'abort', 'status', 'approve']) {
        const unknown = await kwave([cmd, multi, '--cluster', 'sim-9']);
        assert.equal(unknown.code, 2, `${cmd}: ${unknown.stderr}`);
        assert.match(
          unknown.stderr,
          /^kwave: USAGE --cluster: plan names has no cluster "sim-9" \(its clusters: sim-1, sim-2\)$/m,
          cmd,
        );
        const notMulti = await kwave([cmd, one, '--cluster', 'sim-1']);
        assert.equal(notMulti.code, 2, `${cmd}: ${notMulti.stderr}`);
        assert.match(
          notMulti.stderr,
          /^kwave: USAGE --cluster: plan one lists no clusters \(spec\.clusters\); use --context/m,
          cmd,
        );
        const context = await kwave([cmd, multi, '--context', 'sim-1']);
        assert.equal(context.code, 2, `${cmd}: ${context.stderr}`);
        assert.match(
          context.stderr,
          /^kwave: USAGE --context: plan names names its clusters' contexts \(spec\.clusters: sim-1, sim-2\); pass --cluster NAME instead$/m,
          cmd,
        );
      }
      // Never run: each cluster says so, on its own line; nothing is written.
      const never = await kwave(['pause', multi]);
      assert.equal(never.code, 2);
      for (const c of CLUSTERS)
        assert.match(
          never.stderr,
          new RegExp(
            `^kwave: REFUSED cluster ${c} \\(context ${c}\\): plan names has not been run in namespace default`,
            'm',
          ),
        );
    });

    test('pause one cluster, approve the waiting one, resume every cluster, abort every cluster: each reaches its own runner', async (t) => {
      const plan = join(dir, 'multi.yaml');
      await writeFile(
        plan,
        multiPlan('multi', CLUSTERS, 'sequential', {
          rollback: 'all',
          gates: [{ name: 'sign-off', afterWaves: [1], approval: true }],
        }),
      );
      for (const url of metricsUrls) await fetch(`${url}/sim/stats/reset`, { method: 'POST' });
      const run = start(['run', plan]);
      try {
        await run.waitFor(
          (e) => e.event === 'gate-approval-wait' && inCluster('sim-1')(e),
          'sim-1 waiting for approval of wave 1',
        );

        // Only sim-2 is paused: its record says so, sim-1's does not.
        const pause = await kwave(['pause', plan, '--cluster', 'sim-2']);
        assert.equal(pause.code, 0, pause.stderr);
        assert.match(
          pause.stdout,
          /^plan multi in cluster sim-2: paused: the runner \(.+\) starts no new pod; pods in flight finish \(by .+\)$/m,
        );
        await run.waitFor((e) => e.event === 'paused' && inCluster('sim-2')(e), 'sim-2 to pause');
        assert.ok(!run.events.some((e) => e.event === 'paused' && inCluster('sim-1')(e)), 'sim-1 is not paused');
        const [s2] = await statusLines([plan, '--cluster', 'sim-2']);
        assert.equal(s2!.cluster, 'sim-2');
        assert.equal(s2!.phase, 'Paused');
        assert.ok(s2!.control?.paused, 'sim-2 record: paused');
        const [s1, more] = await statusLines([plan, '--cluster', 'sim-1']);
        assert.equal(more, undefined, 'one cluster shown');
        assert.equal(s1!.cluster, 'sim-1');
        assert.equal(s1!.control?.paused, undefined, 'sim-1 record: not paused');

        // approve without --cluster: the cluster that waits (sim-1). sim-1 finishes; paused sim-2 starts nothing.
        const approve = await kwave(['approve', plan]);
        assert.equal(approve.code, 0, approve.stderr);
        assert.match(approve.stdout, /^approved wave 1 of plan multi in cluster sim-1 /);
        await run.waitFor((e) => e.event === 'wave-end' && e.wave === 2 && inCluster('sim-1')(e), 'sim-1 wave 2 done');
        assert.deepEqual(await images('sim-1'), Array(3).fill('nginx:1.25.3'));
        const held = await stats(1);
        assert.equal(
          held.requests['patch pods'] ?? 0,
          0,
          `sim-2's pods untouched while paused: ${JSON.stringify(held.requests)}`,
        );

        // resume without --cluster: every cluster; sim-1 had nothing to resume.
        const resume = await kwave(['resume', plan]);
        assert.equal(resume.code, 0, resume.stderr);
        assert.match(resume.stdout, /^plan multi in cluster sim-1: not paused: nothing to resume$/m);
        assert.match(resume.stdout, /^plan multi in cluster sim-2: resumed: the runner \(.+\) goes on \(by .+\)$/m);
        const resumed = await run.waitFor((e) => e.event === 'resumed' && inCluster('sim-2')(e), 'sim-2 to resume');
        const sim2Starts = run.events.filter((e) => e.event === 'pod-start' && inCluster('sim-2')(e));
        assert.ok(
          sim2Starts.every((e) => run.events.indexOf(e) > run.events.indexOf(resumed)),
          'no sim-2 pod started before its resume',
        );
        await run.waitFor(
          (e) => e.event === 'gate-approval-wait' && inCluster('sim-2')(e),
          'sim-2 waiting for approval of wave 1',
        );

        // abort without --cluster: every cluster's record, addressed to the one runner.
        const abort = await kwave(['abort', plan, '-o', 'json']);
        assert.equal(abort.code, 0, abort.stderr);
        const answers = abort.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { cluster: string; changed: boolean; runner: string });
        assert.deepEqual(
          answers.map((a) => [a.cluster, a.changed]),
          [
            ['sim-1', true],
            ['sim-2', true],
          ],
        );
        assert.equal(answers[0]!.runner, answers[1]!.runner, 'the same runner holds both leases');
        const exit = await exitOf(run);
        assert.equal(exit.code, 3, run.stderr());
        const records = await statusLines([plan]);
        assert.deepEqual(
          records.map((r) => [r.cluster, r.phase, r.control?.abort?.holder]),
          [
            ['sim-1', 'RolledBack', answers[0]!.runner],
            ['sim-2', 'RolledBack', answers[0]!.runner],
          ],
        );
        for (const c of CLUSTERS) assert.deepEqual(await images(c), Array(3).fill('nginx:1.14.2'), `${c} rolled back`);
        t.diagnostic(
          `pause --cluster sim-2 held sim-2 ('patch pods' ${held.requests['patch pods'] ?? 0}) while sim-1 finished; resume (all) → sim-2 went on; abort (all) → runner exit ${exit.code}, records ${records.map((r) => `${r.cluster} ${r.phase}`).join(', ')}; ${endOf(run).message}`,
        );

        // Nothing left to abort: each cluster refuses on its own line.
        const none = await kwave(['abort', plan]);
        assert.equal(none.code, 2);
        for (const c of CLUSTERS)
          assert.match(
            none.stderr,
            new RegExp(
              `^kwave: REFUSED cluster ${c} \\(context ${c}\\): abort plan multi in cluster ${c}: no runner holds the lease of this plan: nothing to abort`,
              'm',
            ),
          );
      } finally {
        run.child.kill('SIGKILL');
      }
    });
  },
);
