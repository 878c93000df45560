// The API server's view of the store for lists: per resource, the objects sorted by key (namespace,
// then name, the order etcd keeps them in), rebuilt only when the resource changes, and the
// snapshots handed out with a `continue` token so the next pages read the same state, as an etcd
// read at the first page's revision would. A kept snapshot is let go as soon as its version leaves
// the store's window, not when 32 newer ones push it out: until then it holds every object of its
// resource as it was (50,000 pods listed once at a rollout's start stayed alive for the whole run).
import { APPS_RESOURCES, type Change, type KubeObject, type Resource, type Store } from '../store.js';

export interface Snapshot {
  /** The store version this snapshot is valid at. */
  rv: number;
  /** `namespace/name`, sorted; parallel to `items`. */
  keys: readonly string[];
  items: readonly KubeObject[];
}

const objectKey = (obj: KubeObject) => `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;

const RESOURCES: Resource[] = [
  'pods',
  'nodes',
  'namespaces',
  'events',
  'configmaps',
  'leases',
  'poddisruptionbudgets',
  ...APPS_RESOURCES,
];

interface Index {
  byKey: Map<string, KubeObject>;
  keys: string[] | null;
  items: KubeObject[] | null;
}

export class ListCache {
  private readonly indexes = new Map<Resource, Index>();
  private readonly kept = new Map<string, Snapshot>();
  /** No kept snapshot is older than this (it may be lower than the oldest after evictions). */
  private oldestKept = Infinity;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Store,
    private readonly maxKeptSnapshots = 32,
  ) {
    for (const r of RESOURCES) {
      this.indexes.set(r, { byKey: new Map(store.list(r).map((o) => [objectKey(o), o])), keys: null, items: null });
    }
    this.unsubscribe = store.subscribe((c) => this.apply(c));
  }

  private apply(change: Change): void {
    const index = this.indexes.get(change.resource);
    if (!index) return;
    const k = objectKey(change.object);
    if (change.type === 'DELETED') index.byKey.delete(k);
    else index.byKey.set(k, change.object);
    if (change.type !== 'MODIFIED') index.keys = null;
    index.items = null;
    if (this.oldestKept < this.store.oldestResumableVersion) this.dropExpired();
  }

  /** Drops the kept snapshots that `recall` would refuse: their version has left the store's window. */
  private dropExpired(): void {
    const oldest = this.store.oldestResumableVersion;
    this.oldestKept = Infinity;
    for (const [id, snap] of this.kept) {
      if (snap.rv < oldest) this.kept.delete(id);
      else this.oldestKept = Math.min(this.oldestKept, snap.rv);
    }
  }

  /** All objects of a resource now, sorted by key. */
  snapshot(resource: Resource): Snapshot {
    const index = this.indexes.get(resource)!;
    // Plain code-unit order, as etcd compares keys byte by byte (names are ASCII).
    index.keys ??= [...index.byKey.keys()].sort();
    index.items ??= index.keys.map((k) => index.byKey.get(k)!);
    return { rv: this.store.resourceVersion, keys: index.keys, items: index.items };
  }

  /** Keeps a snapshot for the pages that follow a `continue` token. */
  keep(resource: Resource, snapshot: Snapshot): void {
    const id = `${resource}@${snapshot.rv}`;
    this.kept.delete(id);
    this.kept.set(id, snapshot);
    this.oldestKept = Math.min(this.oldestKept, snapshot.rv);
    while (this.kept.size > this.maxKeptSnapshots) this.kept.delete(this.kept.keys().next().value!);
  }

  /** The snapshot a continue token refers to, unless it was dropped or has left the store's window. */
  recall(resource: Resource, rv: number): Snapshot | undefined {
    const id = `${resource}@${rv}`;
    const snap = this.kept.get(id);
    if (snap && rv < this.store.oldestResumableVersion) {
      this.kept.delete(id);
      return undefined;
    }
    return snap;
  }

  close(): void {
    this.unsubscribe();
    this.kept.clear();
  }
}
