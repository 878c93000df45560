// Several simulated clusters from one process (`kwave sim --clusters N`): each its own store,
// world, kubelet, API server (port, CA, token) and metrics/admin port with its own /sim/stats, as
// separate clusters are; one kubeconfig holds a context per cluster, named `sim-1` … `sim-N`.
import { renderMultiKubeconfig, writeKubeconfig } from './apiserver/kubeconfig.js';
import { startSim, type Sim, type SimOptions } from './index.js';

export interface SimClustersOptions extends Omit<SimOptions, 'kubeconfigOut'> {
  /** How many clusters (1 or more). */
  clusters: number;
  /** Write the kubeconfig with every cluster's context here once all serve. */
  kubeconfigOut?: string;
}

interface SimCluster {
  /** The cluster's kubeconfig context: `sim-1` … `sim-N`. */
  name: string;
  sim: Sim;
}

export interface SimClusters {
  clusters: SimCluster[];
  kubeconfigPath?: string;
  /** The kubeconfig (YAML) with one context per cluster; the first is the current context. */
  kubeconfig(): string;
  close(): Promise<void>;
}

/** The context name of cluster `i` (0-based). */
function simClusterName(i: number): string {
  return `sim-${i + 1}`;
}

/**
 * Starts `clusters` simulated clusters. A fixed `port`/`metricsPort` P gives cluster i the port
 * P + i - 1 (0 picks free ones for each). The first cluster takes the seed as one cluster would
 * (given, else the fixture's, else 1); cluster i the given seed (else 1) plus i - 1, so their
 * jitter differs as separate clusters' would. If one fails to start,
 * those already started are closed again.
 */
export async function startSimClusters(options: SimClustersOptions): Promise<SimClusters> {
  const { clusters: count, kubeconfigOut, ...one } = options;
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`startSimClusters: clusters must be a whole number of 1 or more, found ${count}`);
  const started: SimCluster[] = [];
  const closeAll = async () => {
    for (const c of [...started].reverse()) await c.sim.close();
  };
  try {
    for (let i = 0; i < count; i++) {
      const offset = (p: number | undefined) => (p ? p + i : 0);
      const seed = i === 0 ? one.seed : (one.seed ?? 1) + i;
      // Started one after another: a fixture file is read once per cluster, and ports never race.
      const sim = await startSim({
        ...one,
        port: offset(one.port),
        metricsPort: offset(one.metricsPort),
        ...(seed === undefined ? {} : { seed }),
      });
      started.push({ name: simClusterName(i), sim });
    }
  } catch (err) {
    await closeAll();
    throw err;
  }
  const kubeconfig = () =>
    renderMultiKubeconfig(
      started.map((c) => ({ server: c.sim.url, caPem: c.sim.caPem, token: c.sim.token, context: c.name })),
    );
  if (kubeconfigOut) {
    try {
      await writeKubeconfig(kubeconfigOut, kubeconfig());
    } catch (err) {
      await closeAll();
      throw err;
    }
  }
  let closing: Promise<void> | undefined;
  return {
    clusters: started,
    ...(kubeconfigOut ? { kubeconfigPath: kubeconfigOut } : {}),
    kubeconfig,
    close: () => (closing ??= closeAll()),
  };
}
