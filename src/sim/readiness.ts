// Watches every pod's Ready condition in the store, whoever writes it (the kubelet, the node
// controller's NotReady fault, a client writing pods/status), and reports each transition. This
// feeds /sim/stats (not-Ready pods per namespace) and the app traffic metrics.
import { conditionStatus, type PodCondition } from './podStatus.js';
import type { KubeObject, Store } from './store.js';

/** `ready` is undefined when the pod is gone. */
export type ReadinessListener = (pod: KubeObject, ready: boolean | undefined) => void;

const podKey = (pod: KubeObject) => `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;

export function isPodReady(pod: KubeObject): boolean {
  const conditions = (pod.status as { conditions?: PodCondition[] } | undefined)?.conditions;
  return conditionStatus(conditions, 'Ready') === 'True';
}

/** Pods as some view holds them (the agent's watch of a real API server), told of each change by name. */
export interface PodView {
  pods(): Iterable<KubeObject>;
  pod(namespace: string, name: string): KubeObject | undefined;
  subscribe(listener: (namespace: string, name: string) => void): () => void;
}

/** watchPodReadiness over a PodView: the pod's last state is kept to report its deletion. */
export function followPodReadiness(view: PodView, listener: ReadinessListener): () => void {
  const last = new Map<string, KubeObject>();
  const known = new Map<string, boolean>();
  const see = (pod: KubeObject) => {
    const key = podKey(pod);
    const ready = isPodReady(pod);
    const before = last.get(key);
    last.set(key, pod);
    if (before && before.metadata.uid === pod.metadata.uid && known.get(key) === ready) return;
    known.set(key, ready);
    listener(pod, ready);
  };
  const unsubscribe = view.subscribe((namespace, name) => {
    const pod = view.pod(namespace, name);
    if (pod) return see(pod);
    const key = `${namespace}/${name}`;
    const gone = last.get(key);
    if (!gone) return;
    last.delete(key);
    known.delete(key);
    listener(gone, undefined);
  });
  for (const pod of view.pods()) see(pod);
  return unsubscribe;
}

/**
 * Calls `listener` for every pod already in the store, then on every change of a pod's
 * readiness (and on its deletion). Returns the unsubscribe.
 */
export function watchPodReadiness(store: Store, listener: ReadinessListener): () => void {
  const known = new Map<string, { uid: string | undefined; ready: boolean }>();
  const see = (pod: KubeObject) => {
    const key = podKey(pod);
    const ready = isPodReady(pod);
    const before = known.get(key);
    if (before && before.ready === ready && before.uid === pod.metadata.uid) return;
    known.set(key, { uid: pod.metadata.uid, ready });
    listener(pod, ready);
  };
  const unsubscribe = store.subscribe((change) => {
    if (change.resource !== 'pods') return;
    if (change.type === 'DELETED') {
      const key = podKey(change.object);
      if (known.get(key)?.uid !== change.object.metadata.uid) return;
      known.delete(key);
      listener(change.object, undefined);
      return;
    }
    see(change.object);
  });
  for (const pod of store.list('pods')) see(pod);
  return unsubscribe;
}
