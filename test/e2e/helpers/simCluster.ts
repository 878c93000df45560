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
  close(): Promise<void>;
}

export async function simCluster(options: SimOptions & { namespaces?: string[]; labelSelector?: string } = {}): Promise<SimCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'kwave-e2e-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const sim = await startTestSim({ ...options, kubeconfigOut: kubeconfig });
  const cluster = connect({ kubeconfig });
  const cache = new PodCache(cluster, { namespaces: options.namespaces ?? ['default'], ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}) });
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
    close: async () => {
      cache.close();
      cluster.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
