// The one door to the API server. Every request kwave makes goes through `Cluster`'s typed
// methods, as wire JSON over plain HTTPS (wire.ts); how each one goes out (rate limit, count,
// timeout, retry, KubeError) is requester.ts. Writes are minimal patches built from a decision
// (requestBodies.ts). From client-node kwave takes the kubeconfig (connection and auth), the
// types, and nothing that would load its generated API and models.
import {
  PatchStrategy,
  V1MicroTime,
  type CoreV1Event,
  type KubeConfig,
  type V1ConfigMap,
  type V1Lease,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { checkedPod, decodeNode, decodePdb, decodePod, podShapeProblem, watchEvent } from './decode.js';
import { KubeError } from './kubeError.js';
import {
  continueTokenAhead,
  forEachPage,
  listAllPages,
  type FetchPage,
  type ListPage,
  type PageSink,
} from './pagedList.js';
import {
  configMapPath,
  configMapsPath,
  eventsPath,
  leasePath,
  leasesPath,
  NODES_PATH,
  pdbsPath,
  podPath,
  podsPath,
} from './paths.js';
import { Requester, type CountedRequest, type LaneOptions } from './requester.js';
import { conditionPatchBody, eventBody, type EventSpec, type PodConditionPatch } from './requestBodies.js';
import type { WireRequest } from './wire.js';
import type {
  AccessAnswer,
  AccessQuestion,
  ConfigMapMergePatch,
  ListPodsOptions,
  NodeList,
  NodeWatchEvent,
  PdbList,
  PdbWatchEvent,
  PodList,
  PodWatchEvent,
  WatchHandle,
  WatchNodesQuery,
  WatchPodsQuery,
} from './requestShapes.js';
import { RequestCounter, type WorkloadResource } from './requestCounter.js';
import { DEFAULT_RATE_LIMIT, type RateLimit } from './rateLimit.js';
import { realSleep } from '../sleep.js';
import { DEFAULT_RETRY_POLICY, type RetryDeps, type RetryPolicy } from './retry.js';

// Callers import these from here, as before they had a file of their own.
export type * from './requestShapes.js';

export interface ClusterDeps extends RetryDeps {
  /** Wall clock for timestamps written into objects (conditions, events). */
  date: () => Date;
}

const realClusterDeps: ClusterDeps = {
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
  /** Share keep-alive connection pools between requests (else a new TLS connection per request). Default true. */
  keepAlive?: boolean;
  /** Shared request counter (e.g. one per process for metrics); default a new one. */
  counter?: RequestCounter;
  /** The namespace the context names; used by commands when no namespace is given. */
  defaultNamespace?: string;
  /** Client-side QPS and burst over every request (each attempt of a retry, and each watch opened); default DEFAULT_RATE_LIMIT. */
  rateLimit?: RateLimit;
}

/** Who keeps pods current from the answers to kwave's own requests (the pod cache). */
export interface PodObserver {
  /** A pod a request of this Cluster returned. */
  observe(pod: V1Pod): void;
  /** The pod it holds at this version or a later one, if any: an answer of that version is then not parsed, the held pod is the answer. */
  held(namespace: string, name: string, resourceVersion: string): V1Pod | undefined;
}

/** The lease and the rollout record go in the control lane. */
const CONTROL: LaneOptions = Object.freeze({ lane: 'control' });

export interface LeaseCallOptions {
  /** Give up once this long has passed since the call (attempts, retries and their waits). */
  withinMs?: number;
}

export class Cluster {
  readonly requests: RequestCounter;
  readonly defaultNamespace: string;
  private readonly deps: ClusterDeps;
  private readonly requester: Requester;
  private readonly podObservers = new Set<PodObserver>();
  private eventSeq = 0;

  constructor(
    readonly kubeConfig: KubeConfig,
    options: ClusterOptions = {},
  ) {
    this.deps = { ...realClusterDeps, ...options.deps };
    this.requests = options.counter ?? new RequestCounter();
    this.defaultNamespace = options.defaultNamespace ?? 'default';
    this.requester = new Requester(kubeConfig, {
      deps: this.deps,
      retryPolicy: options.retry ?? DEFAULT_RETRY_POLICY,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      keepAlive: options.keepAlive ?? true,
      counter: this.requests,
      rateLimit: options.rateLimit ?? DEFAULT_RATE_LIMIT,
    });
  }

  /** The client-side rate limit in force. */
  get rateLimit(): RateLimit {
    return this.requester.rateLimit;
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
   * Gives `observer` every pod a request of this Cluster returned (GET, patches), so a pod cache
   * can take in kwave's own writes before the watch delivers them; an answer of a version the
   * observer already holds (the watch was first) is not parsed: the held pod is the answer.
   * Returns the unsubscribe.
   */
  onPodObserved(observer: PodObserver): () => void {
    this.podObservers.add(observer);
    return () => {
      this.podObservers.delete(observer);
    };
  }

  /** Stops retries in progress and closes pooled connections. Watches are closed by their owners. */
  close(): void {
    this.requester.close();
  }

  // ---- pods ---------------------------------------------------------------------------------

  /**
   * Lists pods in a namespace, page by page (`limit`, default 500, then `continue`). If a
   * continue token expires (410) the list starts over. The result's resourceVersion is the
   * first page's: the snapshot all pages belong to.
   */
  async listPods(namespace: string, options: ListPodsOptions = {}): Promise<PodList> {
    const { fetchPage, decode } = this.podPages(namespace, options);
    return listAllPages(fetchPage, decode);
  }

  /**
   * As listPods, but each page's pods go to `onPage` as the page arrives, and are not held here:
   * a caller that keeps less of each pod than its view holds far fewer pods' worth of memory.
   * `view` makes each pod's view once its shape is checked (decode.ts: decodePod, or the cheaper
   * decodePodBrief for a caller that reads only its fields).
   */
  async listPodsByPage(
    namespace: string,
    options: ListPodsOptions,
    onPage: PageSink<V1Pod>,
    view: (raw: unknown) => V1Pod = decodePod,
  ): Promise<{ resourceVersion: string }> {
    const { fetchPage, decode } = this.podPages(namespace, options, view);
    return forEachPage(fetchPage, decode, onPage);
  }

  /** How a pod list's pages are asked for (wire JSON) and decoded (refused if an item cannot be a pod). */
  private podPages(namespace: string, options: ListPodsOptions, view: (raw: unknown) => V1Pod = decodePod) {
    const limit = options.limit ?? 500;
    const fetchPage: FetchPage<unknown> = async (token, early) => {
      const answer = await this.requester.wire(
        { verb: 'list', resource: 'pods', namespace },
        {
          method: 'GET',
          path: podsPath(namespace),
          query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, limit, continue: token },
          onHead: (head) => {
            const next = continueTokenAhead(head);
            if (next !== undefined) early(next);
          },
        },
      );
      return listPage(answer, `list pods in ${namespace}`);
    };
    const decode = (items: unknown[]): V1Pod[] =>
      items.map((item, i) => {
        const problem = podShapeProblem(item);
        if (problem) throw new KubeError(500, 'BadResponse', `list pods in ${namespace}: item ${i}: ${problem}`);
        return view(item);
      });
    return { fetchPage, decode };
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
    return listAllPages(
      async (token) =>
        listPage(
          await this.requester.wire(
            { verb: 'list', resource: 'nodes' },
            { method: 'GET', path: NODES_PATH, query: { limit, continue: token } },
          ),
          'list nodes',
        ),
      (nodes) => nodes.map(decodeNode),
    );
  }

  /** Streams node changes (cluster-scoped), as watchPods does for pods; one `watch nodes` request. */
  async watchNodes(
    query: WatchNodesQuery,
    onEvent: (event: NodeWatchEvent) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<WatchHandle> {
    return this.requester.watch(
      { verb: 'watch', resource: 'nodes' },
      NODES_PATH,
      query,
      (type, object) => {
        const e = watchEvent(type, object, decodeNode);
        if (e) onEvent('object' in e ? { type: e.type, node: e.object } : e);
      },
      onDone,
    );
  }

  // ---- PodDisruptionBudgets (policy/v1) -----------------------------------------------------

  /** Every PDB of a namespace with the list's resourceVersion (PDBs are few: one page). */
  async listPdbs(namespace: string): Promise<PdbList> {
    const page = listPage(
      await this.requester.wire(
        { verb: 'list', resource: 'poddisruptionbudgets', namespace },
        { method: 'GET', path: pdbsPath(namespace) },
      ),
      `list poddisruptionbudgets in ${namespace}`,
    );
    return { items: page.items.map(decodePdb), resourceVersion: page.resourceVersion ?? '' };
  }

  /** Streams PDB changes in one namespace; one `watch poddisruptionbudgets` request. */
  async watchPdbs(
    namespace: string,
    query: WatchNodesQuery,
    onEvent: (event: PdbWatchEvent) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<WatchHandle> {
    return this.requester.watch(
      { verb: 'watch', resource: 'poddisruptionbudgets', namespace },
      pdbsPath(namespace),
      query,
      (type, object) => {
        const e = watchEvent(type, object, decodePdb);
        if (e) onEvent('object' in e ? { type: e.type, pdb: e.object } : e);
      },
      onDone,
    );
  }

  /**
   * GET or strategic-merge PATCH of one apps/v1 workload, as wire JSON (owners.ts decodes it).
   * `dryRun`: the server checks the request (authorization included) and writes nothing.
   */
  async workloadRequest(
    verb: 'get' | 'patch',
    resource: WorkloadResource,
    namespace: string,
    name: string,
    body?: object,
    dryRun = false,
  ): Promise<unknown> {
    const path = `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/${resource}/${encodeURIComponent(name)}`;
    if (verb === 'get') return this.requester.wire({ verb: 'get', resource, namespace }, { method: 'GET', path });
    return this.requester.wire(
      { verb: 'patch', resource, namespace },
      {
        method: 'PATCH',
        path,
        body: body ?? {},
        contentType: PatchStrategy.StrategicMergePatch,
        ...(dryRun ? { query: { dryRun: 'All' } } : {}),
      },
    );
  }

  /** Creates a pod (pre-pull's pullers; kwave creates no workload pod). Not fed to the pod caches: none holds it yet. */
  async createPod(namespace: string, body: object): Promise<V1Pod> {
    return checkedPod(
      await this.requester.wire(
        { verb: 'create', resource: 'pods', namespace },
        { method: 'POST', path: podsPath(namespace), body },
      ),
    );
  }

  /** Deletes a pod at once (grace 0): only pre-pull's finished pullers. 404 → KubeError code 404. */
  async deletePod(namespace: string, name: string): Promise<void> {
    await this.requester.wire(
      { verb: 'delete', resource: 'pods', namespace },
      {
        method: 'DELETE',
        path: podPath(namespace, name),
        body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 },
      },
    );
  }

  /** GET one pod (a fresh read, not a cache). 404 → KubeError code 404. */
  async getPod(namespace: string, name: string): Promise<V1Pod> {
    return this.podAnswer({ verb: 'get', resource: 'pods', namespace }, name, {
      method: 'GET',
      path: podPath(namespace, name),
    });
  }

  /**
   * A strategic-merge patch of `pods` with a body built elsewhere (the in-place state machine
   * builds its own, carrying the resourceVersion it decided on).
   */
  async patchPod(namespace: string, name: string, body: object): Promise<V1Pod> {
    return this.podAnswer({ verb: 'patch', resource: 'pods', namespace }, name, {
      method: 'PATCH',
      path: podPath(namespace, name),
      body,
      contentType: PatchStrategy.StrategicMergePatch,
    });
  }

  /** A strategic-merge patch of `pods/status` with a body built elsewhere (conditions merge by type). */
  async patchPodStatus(namespace: string, name: string, body: object): Promise<V1Pod> {
    return this.podAnswer({ verb: 'patch', resource: 'pods/status', namespace }, name, {
      method: 'PATCH',
      path: `${podPath(namespace, name)}/status`,
      body,
      contentType: PatchStrategy.StrategicMergePatch,
    });
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
   * `kwave adopt` uses it. The in-place flow sends the bodies it built (with the same builder,
   * conditionPatchBody) through patchPodStatus: its close-gate and open-gate carry the
   * resourceVersion decide.ts saw, so such a decision never lands on a pod it did not see; its
   * re-close of a failed pod and its reopening after a refused image patch carry none.
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
    return this.requester.watch(
      { verb: 'watch', resource: 'pods', namespace },
      podsPath(namespace),
      query,
      (type, object) => {
        const e = watchEvent(type, object, checkedPod);
        if (e) onEvent('object' in e ? { type: e.type, pod: e.object } : e);
      },
      onDone,
    );
  }

  // ---- events -------------------------------------------------------------------------------

  /** Records a core/v1 Event (e.g. on a pod, for a failure or a rollback). */
  async createEvent(spec: EventSpec): Promise<CoreV1Event> {
    const namespace = spec.involvedObject.namespace;
    const body = eventBody(spec, this.deps.date(), this.eventSeq++);
    return (await this.object(
      { verb: 'create', resource: 'events', namespace },
      { method: 'POST', path: eventsPath(namespace), body },
    )) as CoreV1Event;
  }

  // ---- configmaps (the rollout record) ------------------------------------------------------

  /** 404 → KubeError code 404. */
  async getConfigMap(namespace: string, name: string): Promise<V1ConfigMap> {
    return (await this.object(
      { verb: 'get', resource: 'configmaps', namespace },
      { method: 'GET', path: configMapPath(namespace, name) },
      CONTROL,
    )) as V1ConfigMap;
  }

  /** 409 (reason AlreadyExists) when it exists. */
  async createConfigMap(namespace: string, body: V1ConfigMap): Promise<V1ConfigMap> {
    return (await this.object(
      { verb: 'create', resource: 'configmaps', namespace },
      { method: 'POST', path: configMapsPath(namespace), body },
      CONTROL,
    )) as V1ConfigMap;
  }

  /**
   * Streams ConfigMap changes in a namespace (configMapWatch.ts narrows it to the record's name
   * with a field selector), in the control lane; events as they come (an ERROR's Status included).
   */
  watchConfigMaps(
    namespace: string,
    query: WatchPodsQuery,
    onEvent: (type: string, object: unknown) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<WatchHandle> {
    return this.requester.watch(
      { verb: 'watch', resource: 'configmaps', namespace },
      configMapsPath(namespace),
      query,
      onEvent,
      onDone,
      'control',
    );
  }

  /** PUT; with `metadata.resourceVersion` set, 409 if someone wrote in between. */
  async updateConfigMap(namespace: string, body: V1ConfigMap): Promise<V1ConfigMap> {
    const name = body.metadata?.name;
    if (!name) throw new Error('updateConfigMap: metadata.name is required');
    return (await this.object(
      { verb: 'update', resource: 'configmaps', namespace },
      { method: 'PUT', path: configMapPath(namespace, name), body },
      CONTROL,
    )) as V1ConfigMap;
  }

  /** JSON merge patch (null removes a key); add `metadata.resourceVersion` to make it conditional. */
  async patchConfigMap(namespace: string, name: string, body: ConfigMapMergePatch): Promise<V1ConfigMap> {
    const req = {
      method: 'PATCH',
      path: configMapPath(namespace, name),
      body,
      contentType: PatchStrategy.MergePatch,
    } as const;
    return (await this.object({ verb: 'patch', resource: 'configmaps', namespace }, req, CONTROL)) as V1ConfigMap;
  }

  // ---- access reviews (may this identity do it?) --------------------------------------------

  /**
   * Asks the API server whether kwave's own identity may do `need` (a SelfSubjectAccessReview,
   * which every authenticated user may create). Undefined when the server has no such API.
   */
  async reviewAccess(need: AccessQuestion): Promise<AccessAnswer | undefined> {
    const [resource, subresource] = need.resource.split('/') as [string, string | undefined];
    const attributes = {
      verb: need.verb,
      group: need.group,
      resource,
      ...(subresource ? { subresource } : {}),
      ...(need.namespace ? { namespace: need.namespace } : {}),
      ...(need.name ? { name: need.name } : {}),
    };
    const body = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: attributes },
    };
    try {
      const review = (await this.requester.wire(
        { verb: 'create', resource: 'selfsubjectaccessreviews' },
        { method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body },
      )) as { status?: { allowed?: boolean; reason?: string } } | undefined;
      return { allowed: review?.status?.allowed === true, reason: review?.status?.reason ?? '' };
    } catch (err) {
      if (err instanceof KubeError && (err.code === 404 || err.code === 405)) return undefined;
      throw err;
    }
  }

  // ---- leases (one runner per plan) ---------------------------------------------------------
  // The control lane (requester.ts): never behind pod traffic. `withinMs`: the answer is worth
  // nothing after that long (the lease's renew deadline), so no attempt or retry outlives it.

  /** 404 → KubeError code 404. acquireTime/renewTime come back as V1MicroTime (Date). */
  async getLease(namespace: string, name: string, options: LeaseCallOptions = {}): Promise<V1Lease> {
    return leaseTimes(
      (await this.object(
        { verb: 'get', resource: 'leases', namespace },
        { method: 'GET', path: leasePath(namespace, name) },
        { ...CONTROL, ...options },
      )) as V1Lease,
    );
  }

  /** 409 (AlreadyExists) when another runner created it first. */
  async createLease(namespace: string, body: V1Lease): Promise<V1Lease> {
    return leaseTimes(
      (await this.object(
        { verb: 'create', resource: 'leases', namespace },
        { method: 'POST', path: leasesPath(namespace), body: leaseTimes(body) },
        CONTROL,
      )) as V1Lease,
    );
  }

  /** PUT; `metadata.resourceVersion` is required by the API for leases; 409 if someone renewed in between. */
  async updateLease(namespace: string, body: V1Lease, options: LeaseCallOptions = {}): Promise<V1Lease> {
    const name = body.metadata?.name;
    if (!name) throw new Error('updateLease: metadata.name is required');
    const req = { method: 'PUT', path: leasePath(namespace, name), body: leaseTimes(body) } as const;
    return leaseTimes(
      (await this.object({ verb: 'update', resource: 'leases', namespace }, req, {
        ...CONTROL,
        ...options,
      })) as V1Lease,
    );
  }

  // ---- who we are ---------------------------------------------------------------------------

  /**
   * The user name the API server knows this client by (a SelfSubjectReview, authentication.k8s.io/v1,
   * GA since 1.28; any authenticated user may create one). Undefined where the server does not
   * serve it (404) or refuses it (403): callers fall back to the local user.
   */
  async whoAmI(): Promise<string | undefined> {
    try {
      const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
      const review = (await this.object(
        { verb: 'create', resource: 'selfsubjectreviews' },
        { method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', body },
      )) as {
        status?: { userInfo?: { username?: string } };
      };
      return review.status?.userInfo?.username || undefined;
    } catch (err) {
      if (err instanceof KubeError && (err.code === 404 || err.code === 403)) return undefined;
      throw err;
    }
  }

  // ---- plumbing -----------------------------------------------------------------------------

  /** A request answered with one object (refused as BadResponse if the answer is none), as wire JSON. */
  private async object(target: CountedRequest, req: WireRequest, options?: LaneOptions): Promise<object> {
    const answer = await this.requester.wire(target, req, options);
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
      throw new KubeError(500, 'BadResponse', `${target.verb} ${target.resource}: the answer is not an object`);
    return answer;
  }

  /**
   * A request answered with one pod: the pod an observer holds at the answer's version (or
   * later), else the answer checked (our flow reads it unguarded), decoded and shown to the observers.
   */
  private async podAnswer(
    target: CountedRequest & { namespace: string },
    name: string,
    req: WireRequest,
  ): Promise<V1Pod> {
    let held: V1Pod | undefined;
    const reuse = (rv: string): V1Pod | undefined => {
      for (const o of this.podObservers) {
        held = o.held(target.namespace, name, rv);
        if (held) return held;
      }
      return undefined;
    };
    const raw = await this.requester.wire(target, { ...req, reuse });
    if (held !== undefined && raw === held) return held;
    const pod = checkedPod(raw);
    for (const o of this.podObservers) o.observe(pod);
    return pod;
  }
}

/** One page of a list answer (refused as BadResponse without an items list). */
function listPage(answer: unknown, what: string): ListPage<unknown> {
  const page = answer as { items?: unknown; metadata?: { resourceVersion?: string; continue?: string } } | undefined;
  if (!Array.isArray(page?.items)) throw new KubeError(500, 'BadResponse', `${what}: the answer holds no items list`);
  return { items: page.items, resourceVersion: page.metadata?.resourceVersion, continue: page.metadata?.continue };
}

/**
 * MicroTime fields come as strings, and a plain Date would go out with millisecond precision,
 * which the API server refuses for MicroTime; V1MicroTime both ways (it writes microseconds).
 */
function leaseTimes(lease: V1Lease): V1Lease {
  const spec = lease.spec;
  if (!spec) return lease;
  const micro = (t: unknown) =>
    t === undefined || t === null || t instanceof V1MicroTime ? t : new V1MicroTime(t as string | Date);
  return {
    ...lease,
    spec: {
      ...spec,
      acquireTime: micro(spec.acquireTime) as V1MicroTime | undefined,
      renewTime: micro(spec.renewTime) as V1MicroTime | undefined,
    },
  };
}
