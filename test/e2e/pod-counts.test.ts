// One count of pods (rollout/podCounts.ts), seen three ways from outside: the rollout record's
// ConfigMap, `kwave_rollout_pods` on the run's /metrics, and `kwave status -o json`. A resumed
// rollout is where they used to part: two pods an earlier revision of the plan upgraded are
// `skipped`, two pods this revision upgraded before an interrupt are `upgraded` in the run that
// resumes it, and all three report the same numbers per state at the end of both runs.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { BIN, ROOT } from './helpers/kwaveBin.js';
import { follow, planYaml, startFleet, type Fleet, type RunningKwave } from './helpers/rolloutCli.js';
import type { RolloutEvent } from '../../src/rollout/events.js';

type Counts = Record<string, number>;
type RolloutStart = Extract<RolloutEvent, { event: 'rollout-start' }>;

/** The run's `rollout-start` event. */
async function startOf(run: RunningKwave): Promise<RolloutStart> {
  return (await run.waitFor((e) => e.event === 'rollout-start', 'the run to start')) as RolloutStart;
}

/** `kwave run FILE` with its own metrics server on a free port, lingering until the test scrapes it. */
function runWithMetrics(fleet: Fleet, file: string): RunningKwave {
  const args = ['run', file, '--kubeconfig', fleet.kubeconfig, '-o', 'json'];
  const child = spawn(process.execPath, [BIN, ...args, '--metrics-address', '127.0.0.1:0', '--metrics-linger', '10m'], {
    cwd: ROOT,
    env: { ...process.env, KUBECONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return follow(child, () => {});
}

/**
 * kwave_rollout_pods by state, scraped from the run's /metrics after its rollout ended, until it
 * exits: the run lingers until a scrape that began after its end (the lease released), which the
 * first scrape may precede. The counts no longer change once `rollout-end` is out.
 */
async function gaugeAfterTheEnd(run: RunningKwave, plan: string): Promise<Counts> {
  await run.waitFor((e) => e.event === 'rollout-end', 'the rollout to end');
  const url = /serving metrics on (\S+)/.exec(run.stderr())?.[1];
  assert.ok(url, `the metrics URL on stderr: ${run.stderr()}`);
  const series = new RegExp(`^kwave_rollout_pods\\{plan="${plan}",state="(\\w+)"\\} (\\d+)$`, 'gm');
  let exited = false;
  void run.exited.then(() => (exited = true));
  let gauge: Counts | undefined;
  while (!exited) {
    try {
      const text = await (await fetch(url)).text();
      gauge = Object.fromEntries([...text.matchAll(series)].map((m) => [m[1]!, Number(m[2])]));
    } catch {
      // The server closed: the run is exiting.
    }
    await setTimeout(100);
  }
  assert.ok(gauge, 'scraped /metrics after the end');
  return gauge;
}

/** The counts in the record's ConfigMap, read from the API server. */
async function recordCounts(fleet: Fleet, plan: string): Promise<Counts> {
  const kc = new KubeConfig();
  kc.loadFromFile(fleet.kubeconfig);
  const cm = await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: `kwave-${plan}`, namespace: 'default' });
  return (JSON.parse(cm.data!['status.json']!) as { counts: Counts }).counts;
}

/** The three views of the count, once the run has exited. */
async function threeViews(fleet: Fleet, run: RunningKwave, file: string, plan: string) {
  const gauge = await gaugeAfterTheEnd(run, plan);
  await run.exited;
  const record = await recordCounts(fleet, plan);
  const status = (await fleet.status(file)).counts as Counts;
  return { gauge, record, status };
}

const counts = (c: Counts): Counts => ({
  pending: 0,
  in_progress: 0,
  upgraded: 0,
  failed: 0,
  skipped: 0,
  vanished: 0,
  ...c,
});

describe('one count of pods: the record, /metrics and kwave status agree on a resumed rollout', () => {
  test('pods upgraded by an earlier revision are skipped, by this revision before the interrupt upgraded', async () => {
    const fleet = await startFleet({ pods: 10 });
    const runs: RunningKwave[] = [];
    try {
      // An earlier revision of the plan brings demo-0 and demo-1 to the target and stops there.
      const earlier = await fleet.writePlan('earlier.yaml', planYaml({ name: 'counts', waves: '[2]' }));
      const first = await fleet.kwave(['run', earlier, '--metrics-address', 'off']);
      assert.equal(first.code, 0, first.stderr);

      // This revision: two more pods in wave 1, then an approval gate the first run is interrupted at.
      const file = await fleet.writePlan(
        'counts.yaml',
        planYaml({ name: 'counts', waves: '[4, "100%"]', gates: [{ name: 'sign-off', approval: true }] }),
      );
      const interrupted = runWithMetrics(fleet, file);
      runs.push(interrupted);
      const start = await startOf(interrupted);
      assert.deepEqual([start.alreadyDone, start.upgradedEarlier], [2, 0]);
      await interrupted.waitFor((e) => e.event === 'gate-approval-wait', 'the approval wait after wave 1');
      interrupted.child.kill('SIGINT');
      const atInterrupt = await threeViews(fleet, interrupted, file, 'counts');
      const expectedAtInterrupt = counts({ pending: 6, upgraded: 2, skipped: 2 });
      assert.deepEqual(atInterrupt, {
        gauge: expectedAtInterrupt,
        record: expectedAtInterrupt,
        status: expectedAtInterrupt,
      });

      // Approved, the re-run resumes: demo-2 and demo-3 stay upgraded (this revision's), the others follow.
      const approved = await fleet.kwave(['approve', file, '--wave', '1']);
      assert.equal(approved.code, 0, approved.stderr);
      const resumed = runWithMetrics(fleet, file);
      runs.push(resumed);
      const restart = await startOf(resumed);
      assert.deepEqual([restart.resumed, restart.alreadyDone, restart.upgradedEarlier], [true, 4, 2]);
      const atEnd = await threeViews(fleet, resumed, file, 'counts');
      assert.equal((await resumed.exited).code, 0, resumed.stderr());
      const expectedAtEnd = counts({ upgraded: 8, skipped: 2 });
      assert.deepEqual(atEnd, { gauge: expectedAtEnd, record: expectedAtEnd, status: expectedAtEnd });
    } finally {
      for (const r of runs) r.child.kill('SIGKILL');
      await fleet.close();
    }
  });
});
