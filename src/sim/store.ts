// The simulated cluster's storage: what etcd plus the watch cache are to kube-apiserver.
// One global resourceVersion counter (as etcd's revision), objects kept as immutable snapshots,
// and a bounded log of recent changes from which watches resume; a watch from a version older
// than the log's window is told it expired (410), as the real cacher does.
import { randomUUID } from 'node:crypto';
import { rfc3339 } from './clock.js';
import { flatString } from './flatString.js';

/** The resources the simulator serves, by their plural (as in URLs and audit logs). */
export type Resource =
  'pods' | 'nodes' | 'namespaces' | 'events' | 'configmaps' | 'leases' | 'poddisruptionbudgets' | AppsResource;

/** apps/v1 workloads: stored and served, not reconciled (the embedded backend runs no controllers). */
export type AppsResource = 'deployments' | 'replicasets' | 'statefulsets' | 'daemonsets';
export const APPS_RESOURCES: readonly AppsResource[] = ['deployments', 'replicasets', 'statefulsets', 'daemonsets'];

interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  generateName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  finalizers?: string[];
  [key: string]: unknown;
}

/** Any Kubernetes object as JSON. Stored snapshots are frozen: clone before changing. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change {
  type: ChangeType;
  resource: Resource;
  /** The object after the change (for DELETED: its last state, with the deletion's version). */
  object: KubeObject;
  /** The store's version at this change. */
  rv: number;
  /**
   * The object before the change (MODIFIED, DELETED). A filtered watch needs it to tell an object
   * that stopped matching (sent as DELETED) from one that never matched, as the real cacher does.
   */
  previous?: KubeObject;
}

export type StoreErrorReason = 'NotFound' | 'AlreadyExists' | 'Conflict';

/** A refusal the API server turns into a `Status` (404, 409). */
export class StoreError extends Error {
  override name = 'StoreError';
  constructor(
    readonly reason: StoreErrorReason,
    readonly resource: Resource,
    readonly objectName: string,
  ) {
    super(`${reason}: ${resource} "${objectName}"`);
  }
}

export interface StoreOptions {
  /** How many recent changes are kept for watches to resume from (the watch cache's window). */
  historySize?: number;
  now?: () => Date;
}

const key = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

/**
 * A deep-frozen copy that shares what is frozen already: stored snapshots are deep-frozen, so a
 * write built from one (`{ ...pod, status }`) copies only its new parts, not the whole pod.
 */
export function frozenCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) out[k] = frozenCopy((value as Record<string, unknown>)[k]);
  return Object.freeze(out) as T;
}

export class Store {
  private version = 1;
  private readonly objects = new Map<Resource, Map<string, KubeObject>>();
  private readonly history: Change[] = [];
  private historyStart = 0; // index of the oldest kept change in `history` (ring by splice)
  private readonly listeners = new Set<(change: Change) => void>();
  private readonly historySize: number;
  private readonly now: () => Date;

  constructor(options: StoreOptions = {}) {
    this.historySize = options.historySize ?? 10_000;
    this.now = options.now ?? (() => new Date());
  }

  /** The current resourceVersion: what a list returns as its own. */
  get resourceVersion(): number {
    return this.version;
  }

  /** The oldest version a watch may start from; older ones have expired (410). */
  get oldestResumableVersion(): number {
    const oldest = this.history[this.historyStart];
    return oldest ? oldest.rv - 1 : this.version;
  }

  private table(resource: Resource): Map<string, KubeObject> {
    let t = this.objects.get(resource);
    if (!t) {
      t = new Map();
      this.objects.set(resource, t);
    }
    return t;
  }

  get(resource: Resource, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.table(resource).get(key(namespace, name));
  }

  /** Every object of a resource, in one namespace or all; ordered by namespace then name. */
  list(resource: Resource, namespace?: string): KubeObject[] {
    const all = [...this.table(resource).values()];
    const picked = namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
    return picked.sort((a, b) =>
      key(a.metadata.namespace, a.metadata.name).localeCompare(key(b.metadata.namespace, b.metadata.name)),
    );
  }

  count(resource: Resource): number {
    return this.table(resource).size;
  }

  /** Stores a new object; sets uid, creationTimestamp and resourceVersion. */
  create(resource: Resource, obj: KubeObject): KubeObject {
    const t = this.table(resource);
    const k = key(obj.metadata.namespace, obj.metadata.name);
    if (t.has(k)) throw new StoreError('AlreadyExists', resource, obj.metadata.name);
    const rv = ++this.version;
    // The caller keeps its object; the store keeps a frozen copy of what is not frozen already.
    const stored = frozenCopy({
      ...obj,
      metadata: {
        ...obj.metadata,
        uid: flatString(randomUUID()),
        creationTimestamp: rfc3339(this.now()),
        resourceVersion: String(rv),
      },
    });
    t.set(k, stored);
    this.record({ type: 'ADDED', resource, object: stored, rv });
    return stored;
  }

  /**
   * Replaces an object. With `expectedVersion`, refuses (Conflict) unless it is the stored one:
   * the optimistic concurrency of every Kubernetes write. uid and creationTimestamp are kept.
   */
  update(resource: Resource, obj: KubeObject, expectedVersion?: string): KubeObject {
    const t = this.table(resource);
    const k = key(obj.metadata.namespace, obj.metadata.name);
    const current = t.get(k);
    if (!current) throw new StoreError('NotFound', resource, obj.metadata.name);
    if (expectedVersion !== undefined && expectedVersion !== current.metadata.resourceVersion) {
      throw new StoreError('Conflict', resource, obj.metadata.name);
    }
    const rv = ++this.version;
    const stored = frozenCopy({
      ...obj,
      metadata: {
        ...obj.metadata,
        uid: current.metadata.uid,
        creationTimestamp: current.metadata.creationTimestamp,
        resourceVersion: String(rv),
      },
    });
    t.set(k, stored);
    this.record({ type: 'MODIFIED', resource, object: stored, rv, previous: current });
    return stored;
  }

  /** Removes an object at once (graceful deletion is the API server's business). */
  remove(resource: Resource, namespace: string | undefined, name: string, expectedUid?: string): KubeObject {
    const t = this.table(resource);
    const k = key(namespace, name);
    const current = t.get(k);
    if (!current || (expectedUid !== undefined && current.metadata.uid !== expectedUid)) {
      throw new StoreError(current ? 'Conflict' : 'NotFound', resource, name);
    }
    t.delete(k);
    const rv = ++this.version;
    const last = frozenCopy({ ...current, metadata: { ...current.metadata, resourceVersion: String(rv) } });
    this.record({ type: 'DELETED', resource, object: last, rv, previous: current });
    return last;
  }

  /**
   * Changes of `resource` after version `since`, oldest first, or 'expired' when `since` is older
   * than the kept window.
   */
  changesSince(resource: Resource, since: number): Change[] | 'expired' {
    if (since < this.oldestResumableVersion) return 'expired';
    const out: Change[] = [];
    for (let i = this.history.length - 1; i >= this.historyStart; i--) {
      const c = this.history[i]!;
      if (c.rv <= since) break;
      if (c.resource === resource) out.push(c);
    }
    return out.reverse();
  }

  /** Calls `listener` synchronously after every change, in order. Returns the unsubscribe. */
  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private record(change: Change): void {
    this.history.push(change);
    if (this.history.length - this.historyStart > this.historySize) {
      this.historyStart++;
      // Compact now and then so the array does not grow without bound.
      if (this.historyStart > this.historySize) {
        this.history.splice(0, this.historyStart);
        this.historyStart = 0;
      }
    }
    for (const l of this.listeners) l(change);
  }
}
