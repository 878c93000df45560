// Counts every API request kwave makes (each attempt of a retried request counts), by verb,
// resource and outcome, the way `kwave_kube_requests_total{verb,resource,code}` will report
// them. The metrics module subscribes with `onRequest`; tests read `snapshot()`.

/** Verbs as in Kubernetes audit logs. */
export type KubeVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** Resources kwave touches; subresources as `pods/status`; `discovery` for the discovery documents (`/api/v1`). */
export type KubeResource =
  | 'discovery'
  | 'pods'
  | 'pods/status'
  | 'pods/resize'
  | 'discovery'
  | 'events'
  | 'configmaps'
  | 'leases'
  | 'namespaces'
  | 'nodes'
  | 'poddisruptionbudgets'
  | 'selfsubjectaccessreviews'
  | 'selfsubjectrulesreviews'
  | 'validatingwebhookconfigurations'
  | 'mutatingwebhookconfigurations'
  | 'selfsubjectreviews'
  | WorkloadResource;

/** The apps/v1 workloads kwave reads (and, with `owners: update`, patches) as pods' owners. */
export type WorkloadResource = 'replicasets' | 'deployments' | 'statefulsets' | 'daemonsets';

/** The HTTP status as a string (`"200"`, `"409"`), or `"error"` when no response arrived. */
type RequestCode = string;

export interface RequestRecord {
  verb: KubeVerb;
  resource: KubeResource;
  code: RequestCode;
  /** From the request's send to its answer or failure (watches: undefined, they last). */
  seconds?: number;
}

export type RequestListener = (record: RequestRecord) => void;

export class RequestCounter {
  private readonly counts = new Map<string, number>();
  private readonly listeners = new Set<RequestListener>();

  /** Records one request; `code` is an HTTP status or 'error'; `seconds` how long it took (not for watches). */
  record(verb: KubeVerb, resource: KubeResource, code: number | 'error', seconds?: number): void {
    const rec: RequestRecord = { verb, resource, code: String(code), ...(seconds === undefined ? {} : { seconds }) };
    const k = `${verb} ${resource} ${rec.code}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    for (const l of this.listeners) l(rec);
  }

  /** Calls `listener` after every request from now on. Returns the unsubscribe. */
  onRequest(listener: RequestListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Counts so far, keyed `"VERB RESOURCE CODE"` (e.g. `"patch pods/status 200"`), sorted. */
  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** Sum of requests matching the given fields (all when none given). */
  total(filter: Partial<RequestRecord> = {}): number {
    let sum = 0;
    for (const [k, n] of this.counts) {
      const [verb, resource, code] = k.split(' ');
      if (filter.verb !== undefined && filter.verb !== verb) continue;
      if (filter.resource !== undefined && filter.resource !== resource) continue;
      if (filter.code !== undefined && filter.code !== code) continue;
      sum += n;
    }
    return sum;
  }
}
