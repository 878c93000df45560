// The embedded simulator's node controller, for the NotReady fault: a node whose kubelet goes
// silent gets Ready Unknown and the `unreachable` taints, and its pods' Ready turns False (what
// kube-controller-manager's node-lifecycle controller does once the node's lease runs out). When
// the node is back, its kubelet reports the node healthy and recomputes its pods' status.
import type { KubeletCore } from './kubelet/core.js';
import { nodeNameOf, rfc3339 } from './kubelet/pods.js';
import type { PodCondition } from './podStatus.js';
import { StoreError, type KubeObject, type Store } from './store.js';

/** A healthy node's conditions, as its kubelet reports them. */
export const NODE_HEALTHY: Record<string, { status: 'True' | 'False'; reason: string; message: string }> = {
  MemoryPressure: {
    status: 'False',
    reason: 'KubeletHasSufficientMemory',
    message: 'kubelet has sufficient memory available',
  },
  DiskPressure: { status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  PIDPressure: { status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  Ready: { status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
};

/** The node's conditions as the node controller leaves them for a silent kubelet, or as the kubelet reports them when back. */
export function nodeConditionsWithReadiness(
  conditions: readonly PodCondition[],
  ready: boolean,
  now: string,
): PodCondition[] {
  return conditions.map((c) => {
    if (!ready) {
      return {
        ...c,
        status: 'Unknown' as const,
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastTransitionTime: c.status === 'Unknown' ? c.lastTransitionTime : now,
      };
    }
    const healthy = NODE_HEALTHY[c.type];
    if (!healthy) return c;
    return {
      ...c,
      ...healthy,
      lastHeartbeatTime: now,
      lastTransitionTime: c.status === healthy.status ? c.lastTransitionTime : now,
    };
  });
}

/** The node as the node controller leaves it when its kubelet goes silent, or as the kubelet reports it when back. */
function nodeWithReadiness(node: KubeObject, ready: boolean, now: string): KubeObject {
  const status = (node.status ?? {}) as { conditions?: PodCondition[] };
  const spec = (node.spec ?? {}) as { taints?: { key: string; effect: string; timeAdded?: string }[] };
  const unreachable = 'node.kubernetes.io/unreachable';
  const conditions = nodeConditionsWithReadiness(status.conditions ?? [], ready, now);
  const others = (spec.taints ?? []).filter((t) => t.key !== unreachable);
  const taints = ready
    ? others
    : [
        ...others,
        { key: unreachable, effect: 'NoSchedule', timeAdded: now },
        { key: unreachable, effect: 'NoExecute', timeAdded: now },
      ];
  const newSpec: Record<string, unknown> = { ...spec, taints };
  if (taints.length === 0) delete newSpec.taints;
  return { ...node, spec: newSpec, status: { ...status, conditions } };
}

/** What the node controller does to the pods of a silent node: Ready → False, nothing else. */
function podMarkedNotReady(pod: KubeObject, now: string): KubeObject | undefined {
  const conditions = ((pod.status as { conditions?: PodCondition[] } | undefined)?.conditions ?? []) as PodCondition[];
  if (!conditions.some((c) => c.type === 'Ready' && c.status === 'True')) return undefined;
  const updated = conditions.map((c) =>
    c.type === 'Ready' ? { ...c, status: 'False' as const, lastTransitionTime: now } : c,
  );
  return { ...pod, status: { ...(pod.status as object), conditions: updated } };
}

/**
 * The NotReady fault on the embedded backend. `ready = false`: the node turns Unknown and
 * tainted, its pods not Ready, its kubelet silent. `ready = true`: all undone.
 * `write` runs a store write without the kubelet reacting to it.
 */
export function setEmbeddedNodeReady(
  store: Store,
  kubelet: KubeletCore,
  nodeName: string,
  ready: boolean,
  now: Date,
  write: <T>(fn: () => T) => T = (fn) => fn(),
): void {
  const node = store.get('nodes', undefined, nodeName);
  if (!node) throw new StoreError('NotFound', 'nodes', nodeName);
  const at = rfc3339(now);
  if (!ready) kubelet.setNodeDown(nodeName, true);
  write(() => store.update('nodes', nodeWithReadiness(node, ready, at)));
  if (ready) {
    kubelet.setNodeDown(nodeName, false);
    return;
  }
  for (const pod of store.list('pods')) {
    if (nodeNameOf(pod) !== nodeName) continue;
    const marked = podMarkedNotReady(pod, at);
    if (marked) write(() => store.update('pods', marked, pod.metadata.resourceVersion));
  }
}
