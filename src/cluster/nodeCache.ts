// A watch-backed copy of the cluster's nodes, so a rollout can tell whether a pod's node can act
// without a read per pod: one resumable list+watch (listWatch.ts, the pod cache's loop) over the
// cluster-scoped collection. A node deleted is remembered as gone (with the time the news came),
// so pods bound to it are told apart from pods on unknown nodes.
import type { V1Node } from '@kubernetes/client-node';
import type { Cluster } from './cluster.js';
import { KubeError } from './kubeError.js';
import { Listeners } from './listeners.js';
import {
  listWatchDeps,
  loopTuning,
  ResumableListWatch,
  type ListWatchDeps,
  type ListWatchStats,
  type ListWatchTuning,
} from './listWatch.js';
import { isKnownOlder } from './resourceVersion.js';

/** What the cache needs of a Cluster. */
export type NodeSource = Pick<Cluster, 'listNodeList' | 'watchNodes'>;

export interface NodeCacheOptions extends ListWatchTuning {
  deps?: Partial<ListWatchDeps>;
}

/** One node as last seen: the object, or gone since (ms). */
export type NodeEntry = { node: V1Node } | { goneSinceMs: number };

export class NodeCache {
  /** Resolves once the nodes have been listed; rejects if the first list fails for good (e.g. 403). */
  readonly synced: Promise<void>;
  readonly stats: ListWatchStats = { lists: 0, watches: 0, expired: 0 };
  private readonly nodes = new Map<string, NodeEntry>();
  private readonly listeners = new Listeners<[name: string, entry: NodeEntry]>();
  private readonly closing = new AbortController();
  private readonly deps: ListWatchDeps;
  private readonly listWatch: ResumableListWatch<V1Node>;

  constructor(
    private readonly source: NodeSource,
    private readonly options: NodeCacheOptions = {},
  ) {
    this.deps = listWatchDeps(options.deps);
    this.listWatch = new ResumableListWatch<V1Node>(
      {
        what: 'nodes',
        list: () => source.listNodeList(),
        watch: (query, onEvent, onDone) =>
          source.watchNodes(query, (e) => onEvent('node' in e ? { type: e.type, object: e.node } : e), onDone),
        onList: (items) => this.replaceAll(items),
        onChange: (type, node) => this.apply(type, node),
      },
      { deps: this.deps, signal: this.closing.signal, stats: this.stats, ...loopTuning(options) },
    );
    this.synced = this.listWatch.synced;
  }

  /** The node as last seen, gone (since when), or undefined when kwave has no news of it. */
  get(name: string): NodeEntry | undefined {
    return this.nodes.get(name);
  }

  /** Every node as last seen (gone ones left out). */
  list(): V1Node[] {
    return [...this.nodes.values()].flatMap((e) => ('node' in e ? [e.node] : []));
  }

  /** Calls `listener` after every change of a node. Returns the unsubscribe. */
  onChange(listener: (name: string, entry: NodeEntry) => void): () => void {
    return this.listeners.add(listener);
  }

  close(): void {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    this.listWatch.failUnsynced(new KubeError(0, 'Closed', 'node cache closed before the nodes were listed'));
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', node: V1Node): void {
    const name = node.metadata?.name;
    if (!name) return;
    if (type === 'DELETED') this.set(name, { goneSinceMs: this.deps.now() });
    else this.upsert(name, node);
  }

  private upsert(name: string, node: V1Node): void {
    const previous = this.nodes.get(name);
    if (
      previous &&
      'node' in previous &&
      isKnownOlder(node.metadata?.resourceVersion, previous.node.metadata?.resourceVersion)
    )
      return;
    this.set(name, { node });
  }

  /** After a (re)list: nodes the list lacks are gone (from now, unless already known gone). */
  private replaceAll(items: V1Node[]): void {
    const listed = new Set(items.map((n) => n.metadata?.name));
    for (const [name, entry] of this.nodes)
      if (!listed.has(name) && 'node' in entry) this.set(name, { goneSinceMs: this.deps.now() });
    for (const node of items) if (node.metadata?.name) this.upsert(node.metadata.name, node);
  }

  private set(name: string, entry: NodeEntry): void {
    this.nodes.set(name, entry);
    this.listeners.notify(name, entry);
  }
}
