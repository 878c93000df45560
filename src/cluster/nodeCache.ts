// A watch-backed copy of the cluster's nodes, so a rollout can tell whether a pod's node can act
// without a read per pod: one list, then one watch from the list's resourceVersion; when a stream
// ends, watch again from the last version seen (bookmarks included); on 410, list again. The same
// loop as the pod cache's, for one cluster-scoped collection. A node deleted is remembered as gone
// (with the time the news came), so pods bound to it are told apart from pods on unknown nodes.
import type { V1Node } from '@kubernetes/client-node';
import type { Cluster, NodeWatchEvent, WatchHandle } from './cluster.js';
import { KubeError, toKubeError } from './kubeError.js';
import { isKnownOlder } from './resourceVersion.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, realSleep, type RetryPolicy, type Sleep } from './retry.js';

/** What the cache needs of a Cluster. */
export type NodeSource = Pick<Cluster, 'listNodeList' | 'watchNodes'>;

export interface NodeCacheOptions {
  deps?: Partial<{ sleep: Sleep; random: () => number; now: () => number }>;
  /** Server-side watch timeout; default a random 300–600 s per stream, as client-go's reflector does. */
  watchTimeoutSeconds?: number;
  /** A stream that ends sooner than this without any event counts as a failure (back-off grows). Default 1000. */
  minWatchMs?: number;
  backoff?: Pick<RetryPolicy, 'baseMs' | 'factor' | 'capMs'>;
}

/** One node as last seen: the object, or gone since (ms). */
export type NodeEntry = { node: V1Node } | { goneSinceMs: number };

export class NodeCache {
  /** Resolves once the nodes have been listed; rejects if the first list fails for good (e.g. 403). */
  readonly synced: Promise<void>;
  readonly stats = { lists: 0, watches: 0, expired: 0 };
  private readonly nodes = new Map<string, NodeEntry>();
  private readonly listeners = new Set<(name: string, entry: NodeEntry) => void>();
  private readonly closing = new AbortController();
  private readonly deps: { sleep: Sleep; random: () => number; now: () => number };
  private rv: string | undefined;
  private resolveSynced!: () => void;
  private rejectSynced!: (err: KubeError) => void;
  private isSynced = false;

  constructor(
    private readonly source: NodeSource,
    private readonly options: NodeCacheOptions = {},
  ) {
    this.deps = { sleep: realSleep, random: Math.random, now: () => Date.now(), ...options.deps };
    this.synced = new Promise<void>((res, rej) => ((this.resolveSynced = res), (this.rejectSynced = rej)));
    this.synced.catch(() => undefined);
    void this.run();
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
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  close(): void {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    if (!this.isSynced) this.rejectSynced(new KubeError(0, 'Closed', 'node cache closed before the nodes were listed'));
  }

  private get closed(): boolean {
    return this.closing.signal.aborted;
  }

  private async run(): Promise<void> {
    let failures = 0;
    const backoff = this.options.backoff ?? DEFAULT_RETRY_POLICY;
    while (!this.closed) {
      if (this.rv === undefined) {
        try {
          const list = await this.source.listNodeList();
          if (this.closed) return;
          this.stats.lists++;
          this.replaceAll(list.items);
          this.rv = list.resourceVersion;
          if (!this.isSynced) {
            this.isSynced = true;
            this.resolveSynced();
          }
        } catch (thrown) {
          if (this.closed) return;
          // The first list already went through the request retries: give up and say why.
          if (!this.isSynced) return this.rejectSynced(toKubeError(thrown));
          failures++;
          await this.deps.sleep(backoffDelay(failures, backoff, this.deps.random), this.closing.signal);
          continue;
        }
      }
      const outcome = await this.watchOnce();
      if (this.closed) return;
      if (outcome.expired) {
        this.stats.expired++;
        this.rv = undefined;
      }
      failures = outcome.productive ? 0 : failures + 1;
      if (failures > 0) await this.deps.sleep(backoffDelay(failures, backoff, this.deps.random), this.closing.signal);
    }
  }

  /** One watch stream from `this.rv` until it ends; `this.rv` follows every event. */
  private watchOnce(): Promise<{ expired: boolean; productive: boolean }> {
    return new Promise((resolve) => {
      const started = this.deps.now();
      const timeoutSeconds = this.options.watchTimeoutSeconds ?? 300 + Math.floor(this.deps.random() * 300);
      const watchdog = new AbortController();
      let events = 0;
      let eventError: KubeError | undefined;
      let finished = false;
      let handle: WatchHandle | undefined;
      const finish = (doneError?: KubeError) => {
        if (finished) return;
        finished = true;
        watchdog.abort();
        this.closing.signal.removeEventListener('abort', onClose);
        handle?.abort();
        const error = eventError ?? doneError;
        const expired = error?.code === 410;
        const refused = doneError !== undefined && doneError.code !== 0 && events === 0 && !eventError;
        resolve({ expired, productive: !refused && !expired && (events > 0 || this.deps.now() - started >= (this.options.minWatchMs ?? 1000)) });
      };
      const onClose = () => finish();
      this.closing.signal.addEventListener('abort', onClose, { once: true });
      // A half-open connection would hang forever: silence well past the server's timeout means it is dead.
      void this.deps.sleep(timeoutSeconds * 1000 + 30_000, watchdog.signal).then(() => {
        if (!finished) finish(new KubeError(0, 'Timeout', `watch of nodes outlived its ${timeoutSeconds}s timeout`));
      });
      this.stats.watches++;
      void this.source
        .watchNodes(
          { resourceVersion: this.rv, timeoutSeconds, allowWatchBookmarks: true },
          (event) => {
            if (finished) return;
            if (event.type === 'ERROR') {
              eventError = event.error;
              finish();
              return;
            }
            events++;
            this.apply(event);
          },
          (err) => finish(err),
        )
        .then((h) => {
          handle = h;
          if (finished) h.abort();
        });
    });
  }

  private apply(event: Exclude<NodeWatchEvent, { type: 'ERROR' }>): void {
    if (event.type === 'BOOKMARK') {
      this.rv = event.resourceVersion;
      return;
    }
    const name = event.node.metadata?.name;
    const rv = event.node.metadata?.resourceVersion;
    if (rv) this.rv = rv;
    if (!name) return;
    if (event.type === 'DELETED') this.set(name, { goneSinceMs: this.deps.now() });
    else this.upsert(name, event.node);
  }

  private upsert(name: string, node: V1Node): void {
    const previous = this.nodes.get(name);
    if (previous && 'node' in previous && isKnownOlder(node.metadata?.resourceVersion, previous.node.metadata?.resourceVersion)) return;
    this.set(name, { node });
  }

  /** After a (re)list: nodes the list lacks are gone (from now, unless already known gone). */
  private replaceAll(items: V1Node[]): void {
    const listed = new Set(items.map((n) => n.metadata?.name));
    for (const [name, entry] of this.nodes) if (!listed.has(name) && 'node' in entry) this.set(name, { goneSinceMs: this.deps.now() });
    for (const node of items) if (node.metadata?.name) this.upsert(node.metadata.name, node);
  }

  private set(name: string, entry: NodeEntry): void {
    this.nodes.set(name, entry);
    for (const l of this.listeners) {
      try {
        l(name, entry);
      } catch (err) {
        // A listener bug must be loud, but must not stop the cache.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}
