// The chaos harness's cluster on the embedded simulator: its store (read and written directly,
// so the other writer and the observer are not counted as kwave's requests), its change feed, its
// API faults (set at start) and /sim/stats.
import { join } from 'node:path';
import { startSim } from '../../src/sim/index.js';
import type { KubeObject } from '../../src/sim/store.js';
import { isSelected, NAMESPACE, RECORD_NAME, type ChaosCluster, type ClusterChange } from './cluster.js';
import type { Scenario } from './scenario.js';

/** Every patch of the refused pod is refused (a run killed after a refusal meets it again); counted down from here. */
const REFUSALS = 1000;

export async function startEmbeddedCluster(s: Scenario, dir: string, timeScale: number): Promise<ChaosCluster> {
  const kubeconfigPath = join(dir, 'kubeconfig');
  const sim = await startSim({
    pods: s.pods,
    seed: s.seed,
    timeScale,
    kubeconfigOut: kubeconfigPath,
    faults: { ...s.faults, retryAfterSeconds: 1 },
  });
  const admin = (path: string) => fetch(`${sim.metricsUrl}${path}`, { method: 'POST' });
  const selected = () => sim.store.list('pods', NAMESPACE).filter(isSelected);
  return {
    kubeconfigPath,
    selectedPods: async () => selected(),
    lease: async () => sim.store.get('leases', NAMESPACE, RECORD_NAME),
    record: async () => sim.store.get('configmaps', NAMESPACE, RECORD_NAME),
    touchPod: async (pod, change) => {
      const copy = structuredClone(pod) as KubeObject & {
        metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
      };
      if ('labels' in change) copy.metadata.labels = { ...copy.metadata.labels, ...change.labels };
      else copy.metadata.annotations = { ...copy.metadata.annotations, ...change.annotations };
      try {
        sim.store.update('pods', copy, pod.metadata.resourceVersion);
        return true;
      } catch {
        return false; // the pod changed or went meanwhile
      }
    },
    deletePod: async (name) => {
      await admin(`/sim/pods/${NAMESPACE}/${name}/delete?gracePeriodSeconds=0`);
    },
    evictPod: async (name, graceSeconds) =>
      (await admin(`/sim/pods/${NAMESPACE}/${name}/delete?gracePeriodSeconds=${graceSeconds}`)).ok,
    crashContainer: async (name) => (await admin(`/sim/pods/${NAMESPACE}/${name}/crash`)).ok,
    deleteNode: async (node) => {
      const res = await admin(`/sim/nodes/${node}/delete`);
      if (!res.ok) throw new Error(`deleting node ${node}: ${res.status} ${await res.text()}`);
    },
    setWatchDelay: (ms) => {
      sim.faults.watchDelayMs = ms;
    },
    setNodeReady: async (node, ready) => sim.kubelet.setNodeReady(node, ready),
    refusePatch: (pod, code) =>
      sim.admission.set([{ verb: 'patch', resource: 'pods', name: pod, refuse: code, times: REFUSALS }]),
    subscribe: (listener) =>
      sim.store.subscribe((change) => {
        const { resource, object } = change;
        if ((resource === 'pods' || resource === 'leases') && object.metadata.namespace !== NAMESPACE) return;
        if (resource === 'pods' || resource === 'leases' || resource === 'nodes')
          listener({ resource, type: change.type, object } as ClusterChange);
      }),
    resetStats: async () => {
      await fetch(`${sim.metricsUrl}/sim/stats/reset`, { method: 'POST' });
    },
    startBackendFaults: async () => undefined,
    runnersStarting: () => undefined,
    runnersRan: () => undefined,
    final: async () => {
      const stats = (await (await fetch(`${sim.metricsUrl}/sim/stats`)).json()) as {
        maxNotReady: Record<string, number>;
      };
      return {
        pods: selected(),
        record: sim.store.get('configmaps', NAMESPACE, RECORD_NAME),
        lease: sim.store.get('leases', NAMESPACE, RECORD_NAME),
        maxNotReady: stats.maxNotReady[NAMESPACE] ?? 0,
        imagePatches: undefined,
        patchesRefused: sim.admission.current.rules.reduce((n, r) => n + REFUSALS - (r.times ?? REFUSALS), 0),
      };
    },
    faultReport: () => ({ observer410: 0, kwaveRelists: 0, problems: [] }),
    close: () => sim.close(),
  };
}
