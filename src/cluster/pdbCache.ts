// A watch-backed copy of the PodDisruptionBudgets of the target namespaces, so a rollout can ask
// "would draining this pod break a PDB?" without a read per pod: per namespace one resumable
// list+watch (listWatch.ts, the pod and node caches' loop).
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { Cluster } from './cluster.js';
import { KubeError } from './kubeError.js';
import { ResumableListWatch, type ListWatchStats } from './listWatch.js';
import { isKnownOlder } from './resourceVersion.js';
import { realSleep, type Sleep } from '../sleep.js';
import type { RetryPolicy } from './retry.js';

/** What the cache needs of a Cluster. */
export type PdbSource = Pick<Cluster, 'listPdbs' | 'watchPdbs'>;

export interface PdbCacheOptions {
  namespaces: readonly string[];
  deps?: Partial<{ sleep: Sleep; random: () => number; now: () => number }>;
  /** Server-side watch timeout; default a random 300–600 s per stream, as client-go's reflector does. */
  watchTimeoutSeconds?: number;
  /** A stream that ends sooner than this without any event counts as a failure (back-off grows). Default 1000. */
  minWatchMs?: number;
  backoff?: Pick<RetryPolicy, 'baseMs' | 'factor' | 'capMs'>;
}

export class PdbCache {
  /** Resolves once every namespace has been listed; rejects if a first list fails for good (e.g. 403). */
  readonly synced: Promise<void>;
  readonly stats: ListWatchStats = { lists: 0, watches: 0, expired: 0 };
  /** By `namespace/name`. */
  private readonly pdbs = new Map<string, V1PodDisruptionBudget>();
  private readonly listeners = new Set<() => void>();
  private readonly closing = new AbortController();
  private readonly loops: ResumableListWatch<V1PodDisruptionBudget>[];

  constructor(source: PdbSource, options: PdbCacheOptions) {
    const deps = { sleep: realSleep, random: Math.random, now: () => Date.now(), ...options.deps };
    this.loops = options.namespaces.map(
      (ns) =>
        new ResumableListWatch<V1PodDisruptionBudget>(
          {
            what: `poddisruptionbudgets in ${ns}`,
            list: () => source.listPdbs(ns),
            watch: (query, onEvent, onDone) => source.watchPdbs(ns, query, (e) => onEvent('pdb' in e ? { type: e.type, object: e.pdb } : e), onDone),
            onList: (items) => this.replaceNamespace(ns, items),
            onChange: (type, pdb) => this.apply(ns, type, pdb),
          },
          { deps, signal: this.closing.signal, stats: this.stats, watchTimeoutSeconds: options.watchTimeoutSeconds, minWatchMs: options.minWatchMs, backoff: options.backoff },
        ),
    );
    this.synced = Promise.all(this.loops.map((l) => l.synced)).then(() => undefined);
    this.synced.catch(() => undefined);
  }

  /** Every PDB as last seen, by namespace then name. */
  list(): V1PodDisruptionBudget[] {
    return [...this.pdbs.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, p]) => p);
  }

  /** Calls `listener` after every change of a PDB. Returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  close(): void {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    for (const l of this.loops) l.failUnsynced(new KubeError(0, 'Closed', 'PDB cache closed before the PDBs were listed'));
  }

  private apply(ns: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', pdb: V1PodDisruptionBudget): void {
    const key = `${ns}/${pdb.metadata?.name ?? ''}`;
    if (type === 'DELETED') this.pdbs.delete(key);
    else if (isKnownOlder(pdb.metadata?.resourceVersion, this.pdbs.get(key)?.metadata?.resourceVersion)) return;
    else this.pdbs.set(key, pdb);
    this.notify();
  }

  private replaceNamespace(ns: string, items: V1PodDisruptionBudget[]): void {
    for (const key of [...this.pdbs.keys()]) if (key.startsWith(`${ns}/`)) this.pdbs.delete(key);
    for (const p of items) this.pdbs.set(`${ns}/${p.metadata?.name ?? ''}`, p);
    this.notify();
  }

  private notify(): void {
    for (const l of this.listeners) {
      try {
        l();
      } catch (err) {
        // A listener bug must be loud, but must not stop the cache.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}
