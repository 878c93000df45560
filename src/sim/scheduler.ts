// A minimal kube-scheduler, so that a pod created without spec.nodeName (`kubectl run`, a pod
// manifest) gets a node as in a real cluster: it binds each pending pod of the default scheduler
// to the Ready, untainted node with the fewest pods that matches its nodeSelector, as the binding
// subresource would (spec.nodeName and PodScheduled True). No affinity, resources or preemption.
import { EventRecorder } from './events.js';
import type { PodCondition } from './podStatus.js';
import type { Change, KubeObject, Store } from './store.js';
import { rfc3339 } from './clock.js';

const podKey = (pod: KubeObject) => `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;

interface PodSpecView {
  nodeName?: string;
  schedulerName?: string;
  nodeSelector?: Record<string, string>;
}

function schedulable(node: KubeObject): boolean {
  const spec = (node.spec ?? {}) as { unschedulable?: boolean; taints?: { effect: string }[] };
  const ready = ((node.status as { conditions?: PodCondition[] } | undefined)?.conditions ?? []).find(
    (c) => c.type === 'Ready',
  );
  return (
    !spec.unschedulable &&
    ready?.status === 'True' &&
    !(spec.taints ?? []).some((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')
  );
}

export class Scheduler {
  /** Pods bound to each node (for "fewest pods first"). */
  private readonly load = new Map<string, Set<string>>();
  private readonly pending = new Set<string>();
  private scheduled: NodeJS.Immediate | undefined;
  private unsubscribe: (() => void) | undefined;
  private writing = false;
  private readonly events: EventRecorder;

  constructor(
    private readonly store: Store,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.events = new EventRecorder(store, now);
  }

  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.store.subscribe((c) => this.onChange(c));
    for (const pod of this.store.list('pods')) this.see(pod, false);
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
  }

  private onChange(change: Change): void {
    if (change.resource === 'nodes' && change.type !== 'DELETED' && schedulable(change.object) && this.pending.size > 0)
      this.kick();
    if (change.resource !== 'pods' || this.writing) return;
    this.see(change.object, change.type === 'DELETED');
  }

  private see(pod: KubeObject, deleted: boolean): void {
    const key = podKey(pod);
    const spec = (pod.spec ?? {}) as PodSpecView;
    if (deleted) {
      this.pending.delete(key);
      if (spec.nodeName) this.load.get(spec.nodeName)?.delete(key);
      return;
    }
    if (spec.nodeName) {
      this.pending.delete(key);
      let set = this.load.get(spec.nodeName);
      if (!set) this.load.set(spec.nodeName, (set = new Set()));
      set.add(key);
      return;
    }
    if (pod.metadata.deletionTimestamp || (spec.schedulerName ?? 'default-scheduler') !== 'default-scheduler') return;
    this.pending.add(key);
    this.kick();
  }

  private kick(): void {
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      for (const key of [...this.pending]) this.schedule(key);
    });
  }

  private schedule(key: string): void {
    const slash = key.indexOf('/');
    const pod = this.store.get('pods', key.slice(0, slash) || undefined, key.slice(slash + 1));
    const spec = (pod?.spec ?? {}) as PodSpecView;
    if (!pod || spec.nodeName || pod.metadata.deletionTimestamp) {
      this.pending.delete(key);
      return;
    }
    const nodes = this.store.list('nodes');
    const selector = Object.entries(spec.nodeSelector ?? {});
    const fits = nodes.filter((n) => schedulable(n) && selector.every(([k, v]) => n.metadata.labels?.[k] === v));
    const now = rfc3339(this.now());
    const conditions = ((pod.status as { conditions?: PodCondition[] } | undefined)?.conditions ?? []).filter(
      (c) => c.type !== 'PodScheduled',
    );
    if (fits.length === 0) {
      const message = `0/${nodes.length} nodes are available: ${nodes.length} node(s) didn't match Pod's node affinity/selector or were not ready. preemption: 0/${nodes.length} nodes are available: ${nodes.length} Preemption is not helpful for scheduling.`;
      const old = ((pod.status as { conditions?: PodCondition[] } | undefined)?.conditions ?? []).find(
        (c) => c.type === 'PodScheduled',
      );
      if (old?.status === 'False' && old.message === message) return; // already said so; wait for a node to change
      this.write(() => {
        this.store.update('pods', {
          ...pod,
          status: {
            ...(pod.status as object),
            conditions: [
              ...conditions,
              {
                type: 'PodScheduled',
                status: 'False',
                reason: 'Unschedulable',
                message,
                lastProbeTime: null,
                lastTransitionTime: now,
              },
            ],
          },
        });
        this.events.record({
          object: pod,
          type: 'Warning',
          reason: 'FailedScheduling',
          message,
          source: { component: 'default-scheduler' },
        });
      });
      return;
    }
    const count = (n: KubeObject) => this.load.get(n.metadata.name)?.size ?? 0;
    const node = fits.reduce((best, n) => (count(n) < count(best) ? n : best));
    this.pending.delete(key);
    this.write(() => {
      const bound = this.store.update('pods', {
        ...pod,
        spec: { ...(pod.spec as object), nodeName: node.metadata.name },
        status: {
          ...(pod.status as object),
          conditions: [
            ...conditions,
            { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now },
          ],
        },
      });
      this.see(bound, false);
      this.events.record({
        object: bound,
        type: 'Normal',
        reason: 'Scheduled',
        message: `Successfully assigned ${key} to ${node.metadata.name}`,
        source: { component: 'default-scheduler' },
      });
    });
  }

  private write(fn: () => void): void {
    this.writing = true;
    try {
      fn();
    } finally {
      this.writing = false;
    }
  }
}
