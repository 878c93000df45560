// Several clusters for the multi-cluster suites: one TestSim per cluster (on the backend
// KWAVE_TEST_BACKEND selects; on real, a control plane each), one kubeconfig with a context per
// cluster (sim-1 … sim-N, as `kwave sim --clusters N` writes), the real `kwave` binary spawned
// against it, and a timeline of what happened to every pod, read from each cluster's own watch
// (never from kwave's output): when its gate closed, when its container restarted, when its gate
// reopened. Entries are numbered in the order this process saw them.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderMultiKubeconfig, writeKubeconfig } from '../../../src/sim/apiserver/kubeconfig.js';
import type { StatsSnapshot } from '../../../src/sim/stats.js';
import { startTestSim, type TestSim } from './backend.js';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import {
  kwaveChildren,
  planWriter,
  planYaml,
  viewPod,
  type CliResult,
  type PlanOptions,
  type PodView,
  type RunningKwave,
} from './rolloutCli.js';

export interface PodMoment {
  seq: number;
  cluster: string;
  pod: string;
  what: 'gate-closed' | 'restarted' | 'gate-reopened';
}

export interface MultiFleet {
  names: string[];
  sims: TestSim[];
  dir: string;
  kubeconfig: string;
  /** Everything seen so far, in order. */
  timeline: PodMoment[];
  /** Resolves once `match` holds for the timeline (checked on each new moment); rejects after `timeoutMs`. */
  waitForTimeline(match: (t: readonly PodMoment[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  stats(cluster: number): Promise<StatsSnapshot>;
  resetStats(cluster: number): Promise<void>;
  /** Pods of `default` labelled app=demo in one cluster, by name (as its API holds them now). */
  pods(cluster: number): Map<string, PodView>;
  writePlan(file: string, yaml: string): Promise<string>;
  /** Spawns `kwave ARGS --kubeconfig K --metrics-address off -o json`. */
  start(args: string[]): RunningKwave;
  /** Runs `kwave ARGS --kubeconfig K` to its end. */
  kwave(args: string[]): Promise<CliResult>;
  close(): Promise<void>;
}

export interface ClusterSpec {
  pods?: number;
  /** Fixture YAML for this cluster. */
  fixture?: string;
}

export async function startMultiFleet(
  clusters: ClusterSpec[],
  options: { timeScale?: number } = {},
): Promise<MultiFleet> {
  const dir = await mkdtemp(join(tmpdir(), 'kwave-multi-e2e-'));
  const names = clusters.map((_, i) => `sim-${i + 1}`);
  const sims: TestSim[] = [];
  const unwatch: (() => void)[] = [];
  const kubeconfig = join(dir, 'kubeconfig');
  const children = kwaveChildren(kubeconfig);
  const timeline: PodMoment[] = [];
  let listeners: (() => void)[] = [];
  const close = async () => {
    children.killAll();
    for (const u of unwatch) u();
    for (const s of sims) await s.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const [i, spec] of clusters.entries()) {
      let fixture: string | undefined;
      if (spec.fixture) {
        fixture = join(dir, `fixture-${i + 1}.yaml`);
        await writeFile(fixture, spec.fixture);
      }
      sims.push(
        await startTestSim({
          ...(fixture ? { fixture } : { pods: spec.pods ?? 3 }),
          timeScale: options.timeScale ?? 0.3,
          seed: 1 + i,
        }),
      );
    }
    // Follow every pod of every cluster from the start.
    for (const [i, sim] of sims.entries()) {
      for (const pod of sim.listPods('default')) {
        let last = viewPod(pod);
        unwatch.push(
          sim.watchPod('default', pod.metadata.name, (obj) => {
            const now = viewPod(obj);
            const add = (what: PodMoment['what']) =>
              timeline.push({ seq: timeline.length, cluster: names[i]!, pod: now.name, what });
            if (last.gate === 'True' && now.gate === 'False') add('gate-closed');
            if (now.restartCount > last.restartCount) add('restarted');
            if (last.gate === 'False' && now.gate === 'True') add('gate-reopened');
            last = now;
            for (const l of listeners) l();
          }),
        );
      }
    }
  } catch (err) {
    await close();
    throw err;
  }
  await writeKubeconfig(
    kubeconfig,
    renderMultiKubeconfig(sims.map((s, i) => ({ server: s.url, caPem: s.caPem, token: s.token, context: names[i] }))),
  );
  return {
    names,
    sims,
    dir,
    kubeconfig,
    timeline,
    waitForTimeline: (match, what, timeoutMs = 180_000) =>
      new Promise((resolve, reject) => {
        if (match(timeline)) return resolve();
        const timer = setTimeout(() => {
          listeners = listeners.filter((l) => l !== listener);
          reject(new Error(`timed out waiting for ${what}; timeline: ${JSON.stringify(timeline)}`));
        }, timeoutMs);
        const listener = () => {
          if (!match(timeline)) return;
          clearTimeout(timer);
          listeners = listeners.filter((l) => l !== listener);
          resolve();
        };
        listeners.push(listener);
      }),
    stats: async (i) => (await (await fetch(`${sims[i]!.metricsUrl}/sim/stats`)).json()) as StatsSnapshot,
    resetStats: async (i) => {
      await fetch(`${sims[i]!.metricsUrl}/sim/stats/reset`, { method: 'POST' });
    },
    pods: (i) => new Map(sims[i]!.listPods('default').map((p) => [p.metadata.name, viewPod(p)] as const)),
    writePlan: planWriter(dir),
    start: children.start,
    kwave: children.kwave,
    close,
  };
}

// ---- what the multi-cluster suites share ----

/** The base plan YAML with spec.clusters (contexts sim-1 … sim-N) and the order appended. */
export function multiPlan(
  name: string,
  clusters: string[],
  order: 'sequential' | 'interleaved',
  extra: Partial<PlanOptions> = {},
): string {
  const base = planYaml({ name, waves: '[1, "100%"]', concurrency: 1, maxUnavailable: 1, ...extra });
  return (
    base +
    stringify({ clusters: clusters.map((c) => ({ name: c, context: c })), clusterOrder: order }, { lineWidth: 0 })
      .replace(/^/gm, '  ')
      .replace(/ +$/, '')
  );
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
export function assertStepsInOrder(timeline: readonly PodMoment[], expected: string[]): void {
  const steps = byStep(timeline);
  assert.deepEqual([...steps.keys()].sort(), [...expected].sort(), 'every step happened');
  for (let i = 1; i < expected.length; i++) {
    const prev = steps.get(expected[i - 1]!)!;
    const next = steps.get(expected[i]!)!;
    const lastOfPrev = Math.max(...prev.map((m) => m.seq));
    const firstOfNext = Math.min(...next.map((m) => m.seq));
    assert.ok(
      lastOfPrev < firstOfNext,
      `${expected[i - 1]} ended (seq ${lastOfPrev}) before ${expected[i]} began (seq ${firstOfNext}); timeline ${JSON.stringify(timeline)}`,
    );
  }
}

export function assertAllUpgradedOnce(fleet: MultiFleet): void {
  for (const [i, name] of fleet.names.entries()) {
    for (const [pod, v] of fleet.pods(i)) {
      assert.equal(v.image, 'docker.io/library/nginx:1.25.3', `${name} ${pod} runs the new image`);
      assert.equal(v.restartCount, 1, `${name} ${pod} was upgraded exactly once`);
      assert.equal(v.gate, 'True', `${name} ${pod} gate open`);
      assert.ok(v.ready, `${name} ${pod} Ready`);
    }
  }
}
