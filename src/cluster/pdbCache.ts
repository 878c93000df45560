// A watch-backed copy of the PodDisruptionBudgets of the target namespaces, so a rollout can ask
// "would draining this pod break a PDB?" without a read per pod: per namespace one resumable
// list+watch (listWatch.ts, the pod and node caches' loop).
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
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
export type PdbSource = Pick<Cluster, 'listPdbs' | 'watchPdbs'>;

export interface PdbCacheOptions extends ListWatchTuning {
  namespaces: readonly string[];
  deps?: Partial<ListWatchDeps>;
}

export class PdbCache {
  /** Resolves once every namespace has been listed; rejects if a first list fails for good (e.g. 403). */
  readonly synced: Promise<void>;
  readonly stats: ListWatchStats = { lists: 0, watches: 0, expired: 0 };
  /** By `namespace/name`. */
  private readonly pdbs = new Map<string, V1PodDisruptionBudget>();
  private readonly listeners = new Listeners<[]>();
  private readonly closing = new AbortController();
  private readonly loops: ResumableListWatch<V1PodDisruptionBudget>[];

  constructor(source: PdbSource, options: PdbCacheOptions) {
    const deps = listWatchDeps(options.deps);
    this.loops = options.namespaces.map(
      (ns) =>
        new ResumableListWatch<V1PodDisruptionBudget>(
          {
            what: `poddisruptionbudgets in ${ns}`,
            list: () => source.listPdbs(ns),
            watch: (query, onEvent, onDone) =>
              source.watchPdbs(ns, query, (e) => onEvent('pdb' in e ? { type: e.type, object: e.pdb } : e), onDone),
            onList: (items) => this.replaceNamespace(ns, items),
            onChange: (type, pdb) => this.apply(ns, type, pdb),
          },
          { deps, signal: this.closing.signal, stats: this.stats, ...loopTuning(options) },
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
    return this.listeners.add(listener);
  }

  close(): void {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    for (const l of this.loops)
      l.failUnsynced(new KubeError(0, 'Closed', 'PDB cache closed before the PDBs were listed'));
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
    this.listeners.notify();
  }
}
