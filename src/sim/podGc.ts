// The embedded simulator's pod garbage collector, for the "node deleted" fault. As
// kube-controller-manager's PodGC treats pods bound to a node that no longer exists: once the
// node has been gone for a quarantine (40 s in Kubernetes, times the simulator's time scale),
// each of its pods is marked Failed with a `DisruptionTarget` condition (reason
// `DeletionByPodGC`) and deleted at once (grace 0), since no kubelet is left to stop it.
import { rfc3339 } from './clock.js';
import { StoreError, type KubeObject, type Store } from './store.js';

/** PodGC's quarantine before it treats a missing node's pods as orphans. */
export const POD_GC_QUARANTINE_MS = 40_000;

export function runPodGc(store: Store, opts: { quarantineMs: number; now?: () => Date }): () => void {
  const now = opts.now ?? (() => new Date());
  const timers = new Set<NodeJS.Timeout>();
  const collect = (node: string) => {
    if (store.get('nodes', undefined, node)) return; // registered again meanwhile
    for (const pod of store.list('pods')) {
      if ((pod.spec as { nodeName?: string } | undefined)?.nodeName !== node) continue;
      try {
        store.remove('pods', pod.metadata.namespace, pod.metadata.name, markFailed(store, pod, now()).metadata.uid);
      } catch (err) {
        if (!(err instanceof StoreError)) throw err; // gone or replaced meanwhile
      }
    }
  };
  const unsubscribe = store.subscribe((change) => {
    if (change.resource !== 'nodes' || change.type !== 'DELETED') return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      collect(change.object.metadata.name);
    }, opts.quarantineMs);
    timers.add(timer);
  });
  return () => {
    unsubscribe();
    for (const t of timers) clearTimeout(t);
  };
}

/** Phase Failed and the DisruptionTarget condition, unless the pod already ended. */
function markFailed(store: Store, pod: KubeObject, at: Date): KubeObject {
  const status = (pod.status ?? {}) as { phase?: string; conditions?: { type: string }[] };
  if (status.phase === 'Succeeded' || status.phase === 'Failed') return pod;
  const condition = {
    type: 'DisruptionTarget',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: rfc3339(at),
    reason: 'DeletionByPodGC',
    message: 'PodGC: node no longer exists',
  };
  const conditions = [...(status.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget'), condition];
  return store.update('pods', { ...pod, status: { ...status, phase: 'Failed', conditions } });
}
