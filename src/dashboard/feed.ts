// The dashboard's reading of the cluster: the rollout records (ConfigMaps labelled as kwave's),
// the Leases and the Events kwave wrote (the latest EVENTS_HELD per namespace), each followed by list+watch per namespace
// (cluster/collectionFollow.ts: resumes after a dropped stream, lists again after a 410, backs
// off while the API server is down). Every change makes a new view (viewModel.ts) for the
// subscribers, at most once per `settleMs`; a timer redraws the ages once a second while anyone
// looks. Reads only, with the user's own credentials.
import type { V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { CollectionFollow, type CollectionSource } from '../cluster/collectionFollow.js';
import type { KubeError } from '../cluster/kubeError.js';
import { MANAGED_BY_LABEL } from '../record/record.js';
import { dashboardView, type DashboardView, type EventObject } from './viewModel.js';

/** Events held per namespace: a rollback of 50,000 pods writes as many, and the page shows the latest few. */
const EVENTS_HELD = 200;

export interface FeedOptions {
  namespaces: readonly string[];
  /** Coalesces bursts of changes (a wave's pods end together): default 200 ms. */
  settleMs?: number;
  onError?: (err: KubeError, what: string) => void;
  now?: () => Date;
}

export class DashboardFeed {
  /** Resolves once every collection was listed once; rejects when one may not be listed (a 403). */
  readonly synced: Promise<void>;
  private readonly follows: CollectionFollow[];
  private readonly listeners = new Set<(view: DashboardView) => void>();
  private timer: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private latest: DashboardView | undefined;
  private readonly now: () => Date;

  constructor(
    source: CollectionSource,
    private readonly options: FeedOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    const changed = () => this.schedule();
    const onError = (what: string) => (err: KubeError, namespace: string) =>
      options.onError?.(err, `${what} in ${namespace}`);
    const namespaces = options.namespaces;
    this.follows = [
      new CollectionFollow(source, {
        resource: 'configmaps',
        namespaces,
        query: { labelSelector: `${MANAGED_BY_LABEL}=kwave` },
        onChange: changed,
        onError: onError('rollout records'),
      }),
      new CollectionFollow(source, {
        resource: 'leases',
        namespaces,
        keep: (o) => o.metadata?.name?.startsWith('kwave-') === true,
        onChange: changed,
        onError: onError('leases'),
      }),
      new CollectionFollow(source, {
        resource: 'events',
        namespaces,
        // kwave's own Events (failures and rollbacks of pods): the latest of them.
        query: { fieldSelector: 'source=kwave' },
        limit: EVENTS_HELD * namespaces.length,
        onChange: changed,
        onError: onError('events'),
      }),
    ];
    this.synced = Promise.all(this.follows.map((f) => f.synced)).then(() => undefined);
    this.synced.catch(() => undefined);
  }

  /** The view now (built on demand when no change has built one yet). */
  view(): DashboardView {
    this.latest ??= this.build();
    return this.latest;
  }

  /** Calls `listener` with each new view until the returned function is called. */
  subscribe(listener: (view: DashboardView) => void): () => void {
    this.listeners.add(listener);
    // Ages and countdowns move without any change in the cluster.
    this.ticker ??= setInterval(() => this.publish(), 1000);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.ticker) {
        clearInterval(this.ticker);
        this.ticker = undefined;
      }
    };
  }

  close(): void {
    for (const f of this.follows) f.close();
    if (this.timer) clearTimeout(this.timer);
    if (this.ticker) clearInterval(this.ticker);
    this.listeners.clear();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.publish();
    }, this.options.settleMs ?? 200);
  }

  private publish(): void {
    this.latest = this.build();
    for (const l of this.listeners) l(this.latest);
  }

  private build(): DashboardView {
    const [records, leases, events] = this.follows.map((f) => [...f.values()]);
    return dashboardView({
      records: records as V1ConfigMap[],
      leases: leases as V1Lease[],
      events: events as EventObject[],
      now: this.now(),
    });
  }
}
