// A namespace collection (ConfigMaps, Leases or Events) kept current by list+watch, one
// resumable loop per namespace (listWatch.ts: watch from the last version seen, list again on 410,
// back off on errors, notice a silent stream): what a view of many rollouts follows. Objects are
// kept by `namespace/name` as the wire gave them; `onChange` is told after each list and change.
import type { Cluster } from './cluster.js';
import type { KubeError } from './kubeError.js';
import { listWatchDeps, ResumableListWatch, type ListWatchStats, type ListWatchTuning } from './listWatch.js';
import type { FollowedResource, ObjectQuery, WireObject } from './objectRequests.js';

export type CollectionSource = Pick<Cluster, 'listObjects' | 'watchObjects'>;

export interface CollectionFollowOptions extends ListWatchTuning {
  resource: FollowedResource;
  namespaces: readonly string[];
  query?: ObjectQuery;
  /** Which objects to keep (default: all the query selects). */
  keep?: (object: WireObject) => boolean;
  /** At most this many objects are held: the first taken in go first (Events: only the latest matter). */
  limit?: number;
  onChange: () => void;
  onError?: (err: KubeError, namespace: string) => void;
}

const keyOf = (o: WireObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class CollectionFollow {
  /** Resolves once every namespace was listed once; rejects when a first list fails for good (a 403). */
  readonly synced: Promise<void>;
  readonly stats: ListWatchStats = { lists: 0, watches: 0, expired: 0 };
  private readonly objects = new Map<string, WireObject>();
  private readonly stop = new AbortController();

  constructor(source: CollectionSource, options: CollectionFollowOptions) {
    const { resource, query = {}, keep = () => true, limit = Infinity } = options;
    const hold = (o: WireObject) => {
      this.objects.set(keyOf(o), o);
      if (this.objects.size > limit) this.objects.delete(this.objects.keys().next().value!);
    };
    const loops = options.namespaces.map(
      (namespace) =>
        new ResumableListWatch<WireObject>(
          {
            what: `${resource} in ${namespace}`,
            list: () => source.listObjects(resource, namespace, query),
            watch: (q, onEvent, onDone) =>
              source.watchObjects(resource, namespace, { ...query, ...q }, onEvent, onDone),
            onList: (items) => {
              for (const key of [...this.objects.keys()]) if (key.startsWith(`${namespace}/`)) this.objects.delete(key);
              for (const o of items) if (keep(o)) hold(o);
              options.onChange();
            },
            onChange: (type, o) => {
              if (type === 'DELETED' || !keep(o)) this.objects.delete(keyOf(o));
              else hold(o);
              options.onChange();
            },
            onError: (err) => options.onError?.(err, namespace),
          },
          { ...options, deps: listWatchDeps(), signal: this.stop.signal, stats: this.stats },
        ),
    );
    this.synced = Promise.all(loops.map((l) => l.synced)).then(() => undefined);
    this.synced.catch(() => undefined);
  }

  /** The objects held now, in no particular order. */
  values(): IterableIterator<WireObject> {
    return this.objects.values();
  }

  close(): void {
    this.stop.abort();
  }
}
