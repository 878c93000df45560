// The pods kwave made unavailable, counted from the cluster's change feed: the exact rule behind
// `maxUnavailable`, which holds whatever else made pods unready meanwhile (a node NotReady, its
// pods marked not Ready by the kubelet or the node-lifecycle controller).
//
// Only kwave writes its gate condition (`kwave.dev/in-place-ready`). A pod counts as drained by
// kwave from the change in which its gate turned False while the pod was Ready (its previous
// version said Ready True) until its gate is True again or the pod is gone. A pod whose gate kwave
// closed while it was already not Ready (its node down, left drained by a killed run) is not
// counted: kwave's budget lets it start whatever the budget, since starting it makes no more
// pods unavailable (src/rollout/budget.ts, `candidateUnready`).
import type { KubeObject } from '../../src/sim/store.js';
import { gateOf } from './cluster.js';

export interface DrainTracker {
  /** Per pod: its last version seen. */
  last: Map<string, KubeObject>;
  /** Pods drained by kwave now. */
  drained: Set<string>;
  /** The most pods drained by kwave at once, and which they were at that moment. */
  most: number;
  mostPods: string[];
}

export function newDrainTracker(): DrainTracker {
  return { last: new Map(), drained: new Set(), most: 0, mostPods: [] };
}

function isReady(pod: KubeObject | undefined): boolean {
  const conditions = (pod?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
  return conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

/** Takes in one change of a selected pod (in the feed's order). */
export function trackDrain(t: DrainTracker, type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: KubeObject): void {
  const name = pod.metadata.name;
  const previous = t.last.get(name);
  if (type === 'DELETED') {
    t.last.delete(name);
    t.drained.delete(name);
    return;
  }
  t.last.set(name, pod);
  const gate = gateOf(pod);
  if (gate !== 'False') {
    t.drained.delete(name);
    return;
  }
  // Closed just now (or first seen closed): drained by kwave if the pod was Ready before.
  if (!t.drained.has(name) && previous !== undefined && gateOf(previous) !== 'False' && isReady(previous)) {
    t.drained.add(name);
    if (t.drained.size > t.most) {
      t.most = t.drained.size;
      t.mostPods = [...t.drained].sort();
    }
  }
}
