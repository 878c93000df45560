// The one door to the API server. Every request kwave makes goes through `Cluster`: typed calls
// over client-node, each counted (RequestCounter), retried when that is safe (retry.ts), and
// failing only with KubeError. Writes are minimal patches built from a decision (requestBodies.ts).
import https from 'node:https';
import {
  CoordinationV1Api,
  CoreV1Api,
  Observable,
  PatchStrategy,
  V1MicroTime,
  Watch,
  type ConfigurationOptions,
  type CoreV1Event,
  type HttpInfo,
  type KubeConfig,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
  type V1ConfigMap,
  type V1Lease,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { checkedPod, decodeNode, decodePod, podShapeProblem, watchEvent } from './decode.js';
import { KubeError, toKubeError } from './kubeError.js';
import { NODES_PATH, podPath, podsPath } from './paths.js';
import { WireClient, type WireRequest } from './wire.js';
import {
  conditionPatchBody,
  eventBody,
  type EventSpec,
  type PodConditionPatch,
} from './requestBodies.js';
import { RequestCounter, type KubeResource, type KubeVerb } from './requestCounter.js';
import { DEFAULT_RATE_LIMIT, TokenBucket, type RateLimit } from './rateLimit.js';
import { DEFAULT_RETRY_POLICY, realSleep, withRetry, type RetryDeps, type RetryPolicy } from './retry.js';

export interface ClusterDeps extends RetryDeps {
  /** Wall clock for timestamps written into objects (conditions, events). */
  date: () => Date;
}

export const realClusterDeps: ClusterDeps = {
  sleep: realSleep,
  random: Math.random,
  now: () => Date.now(),
  date: () => new Date(),
};

export interface ClusterOptions {
  deps?: Partial<ClusterDeps>;
  retry?: RetryPolicy;
  /** Abort a single request (not a watch) after this long; it then counts as a dropped connection. Default 30 s. */
  requestTimeoutMs?: number;
  /** Share one keep-alive connection pool between requests (client-node makes a new TLS connection per request otherwise). Default true. */
  keepAlive?: boolean;
  /** Shared request counter (e.g. one per process for metrics); default a new one. */
  counter?: RequestCounter;
  /** The namespace the context names; used by commands when no namespace is given. */
  defaultNamespace?: string;
  /** Client-side QPS and burst over every request (each attempt of a retry, and each watch opened); default DEFAULT_RATE_LIMIT. */
  rateLimit?: RateLimit;
}

export interface ListPodsOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; default 500. */
  limit?: number;
}

export interface PodList {
  items: V1Pod[];
  /** The list's resourceVersion: a watch started from it sees every later change. */
  resourceVersion: string;
}

export interface WatchPodsQuery {
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this version; without it the server first sends every object as ADDED. */
  resourceVersion?: string;
  /** The server ends the stream after this long. */
  timeoutSeconds?: number;
  /** Default true. */
  allowWatchBookmarks?: boolean;
}

export type PodWatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; pod: V1Pod }
  | { type: 'BOOKMARK'; resourceVersion: string }
  /** The server ended the watch with a Status, e.g. code 410 when `resourceVersion` is too old. */
  | { type: 'ERROR'; error: KubeError };

export interface NodeList {
  items: V1Node[];
  /** The list's resourceVersion: a watch started from it sees every later change. */
  resourceVersion: string;
}

export type NodeWatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; node: V1Node }
  | { type: 'BOOKMARK'; resourceVersion: string }
  | { type: 'ERROR'; error: KubeError };

/** A node watch's query: as for pods, without selectors (kwave follows every node). */
export type WatchNodesQuery = Omit<WatchPodsQuery, 'labelSelector' | 'fieldSelector'>;

export interface WatchHandle {
  /** Ends the stream; `onDone` is then called once (with an abort error, which callers that asked for it ignore). */
  abort(): void;
}

export interface ConfigMapMergePatch {
  metadata?: { labels?: Record<string, string | null>; annotations?: Record<string, string | null>; resourceVersion?: string };
  data?: Record<string, string | null>;
}

type PodListener = (pod: V1Pod) => void;

// Abort reasons, made once: abort() without a reason builds a DOMException each time.
const REQUEST_TIMED_OUT = Object.freeze(new Error('request timed out'));
const CLUSTER_CLOSED = Object.freeze(new Error('cluster closed'));

export class Cluster {
  readonly requests: RequestCounter;
  readonly defaultNamespace: string;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly watcher: Watch;
  private readonly deps: ClusterDeps;
  private readonly retryPolicy: RetryPolicy;
  private readonly requestTimeoutMs: number;
  private readonly keepAlive: boolean;
  private readonly closing = new AbortController();
  private readonly podListeners = new Set<PodListener>();
  private readonly bucket: TokenBucket;
  private readonly wire: WireClient;
  /** Typed requests under way, for close() to abort. */
  private readonly inFlight = new Set<AbortController>();
  private sharedAgent?: https.Agent;
  private eventSeq = 0;

  constructor(
    readonly kubeConfig: KubeConfig,
    options: ClusterOptions = {},
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.watcher = new Watch(kubeConfig);
    this.deps = { ...realClusterDeps, ...options.deps };
    this.retryPolicy = options.retry ?? DEFAULT_RETRY_POLICY;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.keepAlive = options.keepAlive ?? true;
    this.requests = options.counter ?? new RequestCounter();
    this.defaultNamespace = options.defaultNamespace ?? 'default';
    this.bucket = new TokenBucket(options.rateLimit ?? DEFAULT_RATE_LIMIT, this.deps.now);
    this.wire = new WireClient(kubeConfig, { timeoutMs: this.requestTimeoutMs, keepAlive: this.keepAlive });
  }

  /** The client-side rate limit in force. */
  get rateLimit(): RateLimit {
    return this.bucket.limit;
  }

  /** The API server URL of the selected context. */
  get server(): string {
    return this.kubeConfig.getCurrentCluster()?.server ?? '';
  }

  /** The selected context's name. */
  get contextName(): string {
    return this.kubeConfig.getCurrentContext();
  }

  /**
   * Calls `listener` with every pod a request of this Cluster returned (GET, patches), so a pod
   * cache can take in kwave's own writes before the watch delivers them. Returns the unsubscribe.
   */
  onPodObserved(listener: PodListener): () => void {
    this.podListeners.add(listener);
    return () => {
      this.podListeners.delete(listener);
    };
  }

  /** Stops retries in progress and closes pooled connections. Watches are closed by their owners. */
  close(): void {
    this.closing.abort();
    for (const c of this.inFlight) c.abort(CLUSTER_CLOSED);
    this.sharedAgent?.destroy();
    this.wire.close();
  }

  // ---- pods ---------------------------------------------------------------------------------

  /**
   * Lists pods in a namespace, page by page (`limit`, default 500, then `continue`). If a
   * continue token expires (410) the list starts over. The result's resourceVersion is the
   * first page's: the snapshot all pages belong to.
   */
  async listPods(namespace: string, options: ListPodsOptions = {}): Promise<PodList> {
    const limit = options.limit ?? 500;
    for (let restart = 0; ; restart++) {
      const items: V1Pod[] = [];
      let resourceVersion: string | undefined;
      let token: string | undefined;
      try {
        do {
          const page = (await this.callWire('list', 'pods', {
            method: 'GET',
            path: podsPath(namespace),
            query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, limit, continue: token },
          })) as { items?: unknown[]; metadata?: { resourceVersion?: string; continue?: string } } | undefined;
          if (!Array.isArray(page?.items)) throw new KubeError(500, 'BadResponse', `list pods in ${namespace}: the answer holds no items list`);
          page.items.forEach((item, i) => {
            const problem = podShapeProblem(item);
            if (problem) throw new KubeError(500, 'BadResponse', `list pods in ${namespace}: item ${i}: ${problem}`);
          });
          for (const item of page.items) items.push(decodePod(item));
          resourceVersion ??= page?.metadata?.resourceVersion;
          token = page?.metadata?.continue || undefined;
        } while (token);
      } catch (err) {
        if (err instanceof KubeError && err.code === 410 && token !== undefined && restart < 3) continue;
        throw err;
      }
      return { items, resourceVersion: resourceVersion ?? '' };
    }
  }

  /**
   * Every node, page by page, for their zones (`order: spread-zones`). Callers treat a 403 as
   * "no zones": a namespaced Role cannot grant nodes, and kwave needs none to upgrade pods.
   */
  async listNodes(limit = 500): Promise<V1Node[]> {
    return (await this.listNodeList(limit)).items;
  }

  /** Every node with the list's resourceVersion, for a node watch to start from. Pages as listPods does. */
  async listNodeList(limit = 500): Promise<NodeList> {
    for (let restart = 0; ; restart++) {
      const items: V1Node[] = [];
      let resourceVersion: string | undefined;
      let token: string | undefined;
      try {
        do {
          const page = await this.call('list', 'nodes', (opts) => this.core.listNodeWithHttpInfo({ limit, _continue: token }, opts));
          items.push(...page.items);
          resourceVersion ??= page.metadata?.resourceVersion;
          token = page.metadata?._continue || undefined;
        } while (token);
      } catch (err) {
        if (err instanceof KubeError && err.code === 410 && token !== undefined && restart < 3) continue;
        throw err;
      }
      return { items, resourceVersion: resourceVersion ?? '' };
    }
  }

  /** Streams node changes (cluster-scoped), as watchPods does for pods; one `watch nodes` request. */
  async watchNodes(query: WatchNodesQuery, onEvent: (event: NodeWatchEvent) => void, onDone: (err: KubeError | undefined) => void): Promise<WatchHandle> {
    return this.watchPath('nodes', NODES_PATH, query, (type, object) => {
      const e = watchEvent(type, object, decodeNode);
      if (e) onEvent('object' in e ? { type: e.type, node: e.object } : e);
    }, onDone);
  }

  /** GET one pod (a fresh read, not a cache). 404 → KubeError code 404. */
  async getPod(namespace: string, name: string): Promise<V1Pod> {
    const pod = await this.callWire('get', 'pods', { method: 'GET', path: podPath(namespace, name) });
    return this.observed(checkedPod(pod));
  }

  /**
   * A strategic-merge patch of `pods` with a body built elsewhere (the in-place state machine
   * builds its own, carrying the resourceVersion it decided on).
   */
  async patchPod(namespace: string, name: string, body: object): Promise<V1Pod> {
    const pod = await this.callWire('patch', 'pods', { method: 'PATCH', path: podPath(namespace, name), body, contentType: PatchStrategy.StrategicMergePatch });
    return this.observed(checkedPod(pod));
  }

  /** A strategic-merge patch of `pods/status` with a body built elsewhere (conditions merge by type). */
  async patchPodStatus(namespace: string, name: string, body: object): Promise<V1Pod> {
    const pod = await this.callWire('patch', 'pods/status', {
      method: 'PATCH',
      path: `${podPath(namespace, name)}/status`,
      body,
      contentType: PatchStrategy.StrategicMergePatch,
    });
    return this.observed(checkedPod(pod));
  }

  /**
   * Sets one condition on `pods/status` (strategic merge by condition type), unconditionally.
   *
   * Why unconditionally: closing the readiness gate is the write that keeps traffic off a pod
   * about to restart. Deciding "the gate is already False, skip it" from a cache that may be
   * stale is exactly how OpenKruise once let traffic reach an upgrading pod. This patch carries
   * no resourceVersion and touches only the one condition, so sending it is always safe and its
   * result does not depend on what we believed; the returned pod is fresh state from the server
   * (and is fed to pod caches through onPodObserved), so the next decision sees it.
   * `kwave adopt` uses it. The in-place flow sends its own bodies through patchPodStatus: they
   * carry the resourceVersion decide.ts saw, so a decision never lands on a pod it did not see.
   */
  async patchPodCondition(namespace: string, name: string, condition: PodConditionPatch): Promise<V1Pod> {
    return this.patchPodStatus(namespace, name, conditionPatchBody(condition, this.deps.date()));
  }

  /**
   * Streams pod changes in one namespace. Counts as one `watch pods` request (code 200 once the
   * stream opened, else the HTTP status or 'error'). `onDone` is called exactly once, with
   * undefined when the server ended the stream cleanly, or the error that ended it.
   */
  async watchPods(
    namespace: string,
    query: WatchPodsQuery,
    onEvent: (event: PodWatchEvent) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<WatchHandle> {
    return this.watchPath('pods', podsPath(namespace), query, (type, object) => {
      const e = watchEvent(type, object, checkedPod);
      if (e) onEvent('object' in e ? { type: e.type, pod: e.object } : e);
    }, onDone);
  }

  /** One watch stream of `path`, counted as one `watch RESOURCE` request. */
  private async watchPath(
    resource: 'pods' | 'nodes',
    path: string,
    query: WatchPodsQuery,
    onRaw: (type: string, object: unknown) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<WatchHandle> {
    let settled = false;
    let failure: KubeError | undefined;
    const done = (err: unknown) => {
      if (settled) return;
      settled = true;
      failure = err ? toKubeError(err) : undefined;
      onDone(failure);
    };
    const params: Record<string, string | number | boolean | undefined> = {
      labelSelector: query.labelSelector || undefined,
      fieldSelector: query.fieldSelector || undefined,
      resourceVersion: query.resourceVersion || undefined,
      timeoutSeconds: query.timeoutSeconds,
      allowWatchBookmarks: query.allowWatchBookmarks ?? true,
    };
    let controller: AbortController | undefined;
    try {
      await this.bucket.take(this.deps.sleep, this.closing.signal);
      controller = await this.watcher.watch(path, params, onRaw, done);
    } catch (err) {
      done(err);
    }
    // The promise resolves after the response headers arrived: a non-200 answer or a failed
    // connection has already called `done` by now.
    if (failure) this.requests.record('watch', resource, failure.code || 'error');
    else this.requests.record('watch', resource, 200);
    return { abort: () => controller?.abort() };
  }

  // ---- events -------------------------------------------------------------------------------

  /** Records a core/v1 Event (e.g. on a pod, for a failure or a rollback). */
  async createEvent(spec: EventSpec): Promise<CoreV1Event> {
    const namespace = spec.involvedObject.namespace;
    // Wire JSON rather than the model class: the body builder owns the exact format.
    const body = eventBody(spec, this.deps.date(), this.eventSeq++) as unknown as CoreV1Event;
    return this.call('create', 'events', (opts) => this.core.createNamespacedEventWithHttpInfo({ namespace, body }, opts));
  }

  // ---- configmaps (the rollout record) ------------------------------------------------------

  /** 404 → KubeError code 404. */
  async getConfigMap(namespace: string, name: string): Promise<V1ConfigMap> {
    return this.call('get', 'configmaps', (opts) => this.core.readNamespacedConfigMapWithHttpInfo({ namespace, name }, opts));
  }

  /** 409 (reason AlreadyExists) when it exists. */
  async createConfigMap(namespace: string, body: V1ConfigMap): Promise<V1ConfigMap> {
    return this.call('create', 'configmaps', (opts) => this.core.createNamespacedConfigMapWithHttpInfo({ namespace, body }, opts));
  }

  /** PUT; with `metadata.resourceVersion` set, 409 if someone wrote in between. */
  async updateConfigMap(namespace: string, body: V1ConfigMap): Promise<V1ConfigMap> {
    const name = body.metadata?.name;
    if (!name) throw new Error('updateConfigMap: metadata.name is required');
    return this.call('update', 'configmaps', (opts) => this.core.replaceNamespacedConfigMapWithHttpInfo({ namespace, name, body }, opts));
  }

  /** JSON merge patch (null removes a key); add `metadata.resourceVersion` to make it conditional. */
  async patchConfigMap(namespace: string, name: string, body: ConfigMapMergePatch): Promise<V1ConfigMap> {
    return this.call(
      'patch',
      'configmaps',
      (opts) => this.core.patchNamespacedConfigMapWithHttpInfo({ namespace, name, body }, opts),
      PatchStrategy.MergePatch,
    );
  }

  // ---- leases (one runner per plan) ---------------------------------------------------------

  /** 404 → KubeError code 404. acquireTime/renewTime come back as V1MicroTime (Date). */
  async getLease(namespace: string, name: string): Promise<V1Lease> {
    return leaseTimes(await this.call('get', 'leases', (opts) => this.coordination.readNamespacedLeaseWithHttpInfo({ namespace, name }, opts)));
  }

  /** 409 (AlreadyExists) when another runner created it first. */
  async createLease(namespace: string, body: V1Lease): Promise<V1Lease> {
    const lease = leaseTimes(body);
    return leaseTimes(await this.call('create', 'leases', (opts) => this.coordination.createNamespacedLeaseWithHttpInfo({ namespace, body: lease }, opts)));
  }

  /** PUT; `metadata.resourceVersion` is required by the API for leases; 409 if someone renewed in between. */
  async updateLease(namespace: string, body: V1Lease): Promise<V1Lease> {
    const name = body.metadata?.name;
    if (!name) throw new Error('updateLease: metadata.name is required');
    const lease = leaseTimes(body);
    return leaseTimes(
      await this.call('update', 'leases', (opts) => this.coordination.replaceNamespacedLeaseWithHttpInfo({ namespace, name, body: lease }, opts)),
    );
  }

  // ---- plumbing -----------------------------------------------------------------------------

  /** A pod one of our requests returned, checked (our flow reads it unguarded) and shown to the listeners. */
  private observed(pod: V1Pod): V1Pod {
    const problem = podShapeProblem(pod);
    if (problem) throw new KubeError(500, 'BadResponse', `the API server answered with something that is not a pod: ${problem}`);
    for (const l of this.podListeners) l(pod);
    return pod;
  }

  /** A pod request over plain HTTPS (wire.ts): counted per attempt, rate-limited, retried per policy. */
  private callWire(verb: KubeVerb, resource: KubeResource, req: WireRequest): Promise<unknown> {
    return withRetry(
      async () => {
        await this.bucket.take(this.deps.sleep, this.closing.signal);
        try {
          const body = await this.wire.send(req);
          this.requests.record(verb, resource, 200);
          return body;
        } catch (thrown) {
          const err = toKubeError(thrown);
          this.requests.record(verb, resource, err.code || 'error');
          throw err;
        }
      },
      toKubeError,
      this.deps,
      { policy: this.retryPolicy, signal: this.closing.signal },
    );
  }

  /** One request: counted per attempt, retried per policy, failing with KubeError only. */
  private call<T>(verb: KubeVerb, resource: KubeResource, send: (options: ConfigurationOptions) => Promise<HttpInfo<T>>, contentType?: string): Promise<T> {
    return withRetry(
      async () => {
        // Each attempt waits its turn: a retry is another request to the server.
        await this.bucket.take(this.deps.sleep, this.closing.signal);
        // Its own controller, aborted by its timer or by close(): no listener on a shared signal.
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(REQUEST_TIMED_OUT), this.requestTimeoutMs);
        this.inFlight.add(controller);
        try {
          const info = await send(this.requestOptions(controller.signal, contentType));
          this.requests.record(verb, resource, info.httpStatusCode);
          return info.data;
        } catch (thrown) {
          const err = toKubeError(thrown);
          this.requests.record(verb, resource, err.code || 'error');
          throw err;
        } finally {
          clearTimeout(timer);
          this.inFlight.delete(controller);
        }
      },
      toKubeError,
      this.deps,
      { policy: this.retryPolicy, signal: this.closing.signal },
    );
  }

  /** Per-request middleware: a timeout, the pooled agent, and the patch Content-Type. */
  private requestOptions(signal: AbortSignal, contentType?: string): ConfigurationOptions {
    const pre = (ctx: RequestContext): Observable<RequestContext> => {
      ctx.setSignal(signal);
      if (contentType) ctx.setHeaderParam('Content-Type', contentType);
      const agent = ctx.getAgent();
      // client-node builds a fresh https.Agent for every request; reuse one with keep-alive (same
      // TLS options) unless a proxy agent (a subclass) is in play.
      if (this.keepAlive && agent && agent.constructor === https.Agent) {
        this.sharedAgent ??= new https.Agent({ ...(agent as https.Agent).options, keepAlive: true });
        ctx.setAgent(this.sharedAgent);
      }
      return new Observable(Promise.resolve(ctx));
    };
    const middleware: ObservableMiddleware = { pre, post: (res: ResponseContext) => new Observable(Promise.resolve(res)) };
    return { middleware: [middleware], middlewareMergeStrategy: 'append' };
  }
}

/**
 * client-node leaves MicroTime fields as strings when reading and would send a plain Date with
 * millisecond precision, which the API server refuses for MicroTime; normalise both ways.
 */
function leaseTimes(lease: V1Lease): V1Lease {
  const spec = lease.spec;
  if (!spec) return lease;
  const micro = (t: unknown) => (t === undefined || t === null || t instanceof V1MicroTime ? t : new V1MicroTime(t as string | Date));
  return { ...lease, spec: { ...spec, acquireTime: micro(spec.acquireTime) as V1MicroTime | undefined, renewTime: micro(spec.renewTime) as V1MicroTime | undefined } };
}
