// Benchmark of a whole rollout: the simulated cluster with N pods (kubelet sped up 10×), and
// kwave's runner upgrading all of them through the cluster module, in-process. Prints wall time,
// pods per second, API requests per pod by kind (from the simulator's /sim/stats: the success
// path should be 3 writes and ~0 reads per pod), the most pods not Ready at once against the
// budget, and memory. Sizes: BENCH_PODS (default 500,2000); concurrency and budget: BENCH_CONCURRENCY (50).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from '../src/cluster/connect.js';
import { PodCache } from '../src/cluster/podCache.js';
import { realSleep } from '../src/gates/index.js';
import { loadPlanText } from '../src/plan/load.js';
import type { RolloutEvent } from '../src/rollout/events.js';
import { runRollout } from '../src/rollout/runner.js';
import { renderSelector } from '../src/rollout/labelSelector.js';
import { startSim } from '../src/sim/index.js';

const SIZES = (process.env.BENCH_PODS ?? '500,2000').split(',').map(Number);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

function planText(concurrency: number): string {
  return `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: bench }
spec:
  target: { namespace: default, selector: { matchLabels: { app: demo } } }
  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }
  strategy: { waves: [1, "10%", "50%", "100%"], concurrency: ${concurrency}, maxUnavailable: ${concurrency}, podTimeout: 2m }
`;
}

for (const pods of SIZES) {
  const dir = mkdtempSync(path.join(tmpdir(), 'kwave-bench-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const sim = await startSim({ pods, kubeconfigOut: kubeconfig, timeScale: 0.1 });
  const loaded = loadPlanText(planText(CONCURRENCY), 'bench.yaml');
  if (!loaded.ok) throw new Error(loaded.errors[0]?.message);
  const plan = loaded.plan;
  const cluster = connect({ kubeconfig });
  await fetch(`${sim.metricsUrl}/sim/stats/reset`, { method: 'POST' });
  const t0 = performance.now();
  const cache = new PodCache(cluster, { namespaces: ['default'], labelSelector: renderSelector(plan.target.selector) });
  await cache.synced;
  const durations: number[] = [];
  const result = await runRollout(plan, {
    writer: cluster,
    view: cache,
    sink: (e: RolloutEvent) => {
      if (e.event === 'pod-end') durations.push(e.durationMs);
    },
    sleep: realSleep,
    stop: new AbortController().signal,
  });
  const seconds = (performance.now() - t0) / 1000;
  const stats = (await (await fetch(`${sim.metricsUrl}/sim/stats`)).json()) as {
    requests: Record<string, number>;
    maxNotReady: Record<string, number>;
  };
  durations.sort((a, b) => a - b);
  const median = durations[Math.floor(durations.length / 2)] ?? 0;
  const perPod = Object.entries(stats.requests)
    .map(([k, v]) => `${k} ${(v / pods).toFixed(2)}`)
    .join(', ');
  const mem = process.memoryUsage();
  console.log(
    `${pods} pods, concurrency ${CONCURRENCY}: ${result.phase} in ${seconds.toFixed(1)} s (${(pods / seconds).toFixed(0)} pods/s), ` +
      `median pod ${median} ms; requests per pod: ${perPod}; max not Ready ${stats.maxNotReady.default ?? 0} (budget ${CONCURRENCY}); ` +
      `process (kwave + simulator) RSS ${mb(mem.rss)}, heap ${mb(mem.heapUsed)}`,
  );
  cache.close();
  cluster.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}
