// A simulated cluster and kwave's own client to it, the way kwave reaches a real one: HTTPS,
// the kubeconfig the simulator writes, the cluster module and its watch-backed pod cache.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { connect } from '../../../src/cluster/connect.js';
import type { Cluster } from '../../../src/cluster/cluster.js';
import { PodCache } from '../../../src/cluster/podCache.js';
import type { SimOptions } from '../../../src/sim/index.js';
import { startTestSim, type TestSim } from './backend.js';
import type { StatsSnapshot } from '../../../src/sim/stats.js';
import type { KubeObject } from '../../../src/sim/store.js';
import { isPodReady } from '../../../src/inplace/podView.js';

export interface SimCluster {
  /** The cluster, on the backend KWAVE_TEST_BACKEND selects. */
  sim: TestSim;
  cluster: Cluster;
  cache: PodCache;
  kubeconfig: string;
  dir: string;
  stats(): Promise<StatsSnapshot>;
  resetStats(): Promise<void>;
  pod(name: string, namespace?: string): V1Pod;
  /**
   * The pod once it is Ready again. On the real backend the kubelet (the node agent) sets Ready
   * from the reopened gate a moment after kwave's write; the embedded API server at once.
   */
  readyPod(name: string, namespace?: string): Promise<V1Pod>;
  close(): Promise<void>;
}

/** How long `readyPod` waits (a bound, not a sleep). */
const READY_BOUND_MS = 20_000;

export async function simCluster(
  options: SimOptions & { namespaces?: string[]; labelSelector?: string } = {},
): Promise<SimCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'kwave-e2e-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const sim = await startTestSim({ ...options, kubeconfigOut: kubeconfig });
  const cluster = connect({ kubeconfig });
  const cache = new PodCache(cluster, {
    namespaces: options.namespaces ?? ['default'],
    ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
  });
  await cache.synced;
  return {
    sim,
    cluster,
    cache,
    kubeconfig,
    dir,
    stats: async () => (await (await fetch(`${sim.metricsUrl}/sim/stats`)).json()) as StatsSnapshot,
    resetStats: async () => {
      await fetch(`${sim.metricsUrl}/sim/stats/reset`, { method: 'POST' });
    },
    pod: (name, namespace = 'default') => {
      const p = sim.getPod(namespace, name);
      if (!p) throw new Error(`no pod ${namespace}/${name}`);
      return p as unknown as V1Pod;
    },
    readyPod: (name, namespace = 'default') =>
      new Promise<V1Pod>((resolve, reject) => {
        const timer = setTimeout(() => {
          stop();
          reject(new Error(`pod ${namespace}/${name} not Ready within ${READY_BOUND_MS} ms`));
        }, READY_BOUND_MS);
        const check = (p: KubeObject | undefined) => {
          if (!p || !isPodReady(p as unknown as V1Pod)) return;
          clearTimeout(timer);
          stop();
          resolve(p as unknown as V1Pod);
        };
        const stop = sim.watchPod(namespace, name, check);
        check(sim.getPod(namespace, name));
      }),
    close: async () => {
      cache.close();
      cluster.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
