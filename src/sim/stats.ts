// What the simulator reports at /sim/stats: API requests by "VERB RESOURCE[/SUBRESOURCE]" (verbs
// as in Kubernetes audit logs), and per namespace how many pods are not Ready now and the most
// seen at once, so tests can check kwave's budget from outside kwave.

export interface StatsSnapshot {
  requests: Record<string, number>;
  maxNotReady: Record<string, number>;
  notReady: Record<string, number>;
  /** The most pods not Ready at once over every namespace together (a plan's budget spans its namespaces). */
  maxNotReadyTotal: number;
}

export class SimStats {
  private requests = new Map<string, number>();
  /** Per namespace: the pods (by name) that are not Ready now. */
  private readonly unready = new Map<string, Set<string>>();
  private maxNotReady = new Map<string, number>();
  private maxNotReadyTotal = 0;

  /** Counts one API request, e.g. `countRequest('patch', 'pods/status')`. */
  countRequest(verb: string, resource: string): void {
    const k = `${verb} ${resource}`;
    this.requests.set(k, (this.requests.get(k) ?? 0) + 1);
  }

  /** Records whether a pod is Ready now (or gone: `ready = true` removes it from the count). */
  setPodReady(namespace: string, name: string, ready: boolean): void {
    let set = this.unready.get(namespace);
    if (!set) {
      set = new Set();
      this.unready.set(namespace, set);
    }
    if (ready) set.delete(name);
    else set.add(name);
    if (set.size > (this.maxNotReady.get(namespace) ?? 0)) this.maxNotReady.set(namespace, set.size);
    this.maxNotReadyTotal = Math.max(this.maxNotReadyTotal, this.notReadyTotal());
  }

  private notReadyTotal(): number {
    let n = 0;
    for (const set of this.unready.values()) n += set.size;
    return n;
  }

  /** Zeroes request counts; high-water marks restart from the pods not Ready now. */
  reset(): void {
    this.requests = new Map();
    this.maxNotReady = new Map([...this.unready].map(([ns, set]) => [ns, set.size]));
    this.maxNotReadyTotal = this.notReadyTotal();
  }

  snapshot(): StatsSnapshot {
    const namespaces = new Set([...this.unready.keys(), ...this.maxNotReady.keys()]);
    return {
      requests: Object.fromEntries([...this.requests].sort(([a], [b]) => a.localeCompare(b))),
      maxNotReady: Object.fromEntries([...namespaces].sort().map((ns) => [ns, this.maxNotReady.get(ns) ?? 0])),
      notReady: Object.fromEntries([...namespaces].sort().map((ns) => [ns, this.unready.get(ns)?.size ?? 0])),
      maxNotReadyTotal: this.maxNotReadyTotal,
    };
  }
}
