// What the simulator reports at /sim/stats: API requests by "VERB RESOURCE[/SUBRESOURCE]" (verbs
// as in Kubernetes audit logs), how many of them were refused (answered 4xx/5xx: a 409 Conflict
// is an attempt, not a write; though kube-apiserver logs the write of a client gone before its
// answer with an error status too), and per namespace how many pods are not Ready now, the most
// seen at once, and how long each pod was not Ready (unreadySeconds: p50, p95 and max over the
// pods that were not Ready at some time since the reset; a pod still not Ready counts up to now),
// so tests can check kwave's budget and drained windows from outside kwave.

export interface UnreadySeconds {
  p50: number;
  p95: number;
  max: number;
}

export interface StatsSnapshot {
  requests: Record<string, number>;
  /** Of `requests`, those answered with an error status, by the same keys. */
  refused: Record<string, number>;
  maxNotReady: Record<string, number>;
  notReady: Record<string, number>;
  /** The most pods not Ready at once over every namespace together (a plan's budget spans its namespaces). */
  maxNotReadyTotal: number;
  unreadySeconds: Record<string, UnreadySeconds>;
}

/** The nearest-rank percentile of sorted values (p in 0..1); 0 for none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

const seconds = (ms: number) => Math.round(ms) / 1000;

const increment = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

const sortedRecord = (counts: Map<string, number>) =>
  Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));

export class SimStats {
  private requests = new Map<string, number>();
  private refused = new Map<string, number>();
  /** Per namespace: the pods (by name) that are not Ready now, with since when (ms). */
  private readonly unready = new Map<string, Map<string, number>>();
  private maxNotReady = new Map<string, number>();
  private maxNotReadyTotal = 0;
  /** Per namespace and pod: time not Ready (ms) in intervals that ended since the reset. */
  private unreadyMs = new Map<string, Map<string, number>>();
  /** When counting restarted (the reset): intervals that began before count from here. */
  private countedFrom = 0;

  constructor(private readonly now: () => number = Date.now) {
    this.countedFrom = now();
  }

  /** Counts one API request, e.g. `countRequest('patch', 'pods/status')`. */
  countRequest(verb: string, resource: string): void {
    increment(this.requests, `${verb} ${resource}`);
  }

  /** Counts one request (already counted by countRequest) answered with an error status. */
  countRefused(verb: string, resource: string): void {
    increment(this.refused, `${verb} ${resource}`);
  }

  /** Records whether a pod is Ready now (or gone: `ready = true` removes it from the count). */
  setPodReady(namespace: string, name: string, ready: boolean): void {
    let set = this.unready.get(namespace);
    if (!set) {
      set = new Map();
      this.unready.set(namespace, set);
    }
    const since = set.get(name);
    if (ready && since !== undefined) {
      set.delete(name);
      this.addUnready(namespace, name, this.now() - Math.max(since, this.countedFrom));
    } else if (!ready && since === undefined) set.set(name, this.now());
    if (set.size > (this.maxNotReady.get(namespace) ?? 0)) this.maxNotReady.set(namespace, set.size);
    this.maxNotReadyTotal = Math.max(this.maxNotReadyTotal, this.notReadyTotal());
  }

  private notReadyTotal(): number {
    let n = 0;
    for (const set of this.unready.values()) n += set.size;
    return n;
  }

  private addUnready(namespace: string, name: string, ms: number): void {
    let pods = this.unreadyMs.get(namespace);
    if (!pods) this.unreadyMs.set(namespace, (pods = new Map()));
    pods.set(name, (pods.get(name) ?? 0) + ms);
  }

  /** Zeroes request counts and unready times; high-water marks restart from the pods not Ready now. */
  reset(): void {
    this.requests = new Map();
    this.refused = new Map();
    this.maxNotReady = new Map([...this.unready].map(([ns, set]) => [ns, set.size]));
    this.maxNotReadyTotal = this.notReadyTotal();
    this.unreadyMs = new Map();
    this.countedFrom = this.now();
  }

  private unreadyOf(namespace: string): UnreadySeconds {
    const totals = new Map(this.unreadyMs.get(namespace) ?? []);
    const now = this.now();
    for (const [name, since] of this.unready.get(namespace) ?? [])
      totals.set(name, (totals.get(name) ?? 0) + now - Math.max(since, this.countedFrom));
    const sorted = [...totals.values()].sort((a, b) => a - b);
    return {
      p50: seconds(percentile(sorted, 0.5)),
      p95: seconds(percentile(sorted, 0.95)),
      max: seconds(sorted[sorted.length - 1] ?? 0),
    };
  }

  snapshot(): StatsSnapshot {
    const namespaces = [
      ...new Set([...this.unready.keys(), ...this.maxNotReady.keys(), ...this.unreadyMs.keys()]),
    ].sort();
    return {
      requests: sortedRecord(this.requests),
      refused: sortedRecord(this.refused),
      maxNotReady: Object.fromEntries(namespaces.map((ns) => [ns, this.maxNotReady.get(ns) ?? 0])),
      notReady: Object.fromEntries(namespaces.map((ns) => [ns, this.unready.get(ns)?.size ?? 0])),
      maxNotReadyTotal: this.maxNotReadyTotal,
      unreadySeconds: Object.fromEntries(namespaces.map((ns) => [ns, this.unreadyOf(ns)])),
    };
  }
}
