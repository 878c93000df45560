// The one door to the API server. Every request kwave makes goes through `Cluster`'s typed
// methods, as wire JSON over plain HTTPS (wire.ts); how each one goes out (rate limit, count,
// timeout, retry, KubeError) is requester.ts, and how each resource is asked for is its own file
// (podRequests.ts, leaseRequests.ts, …). Writes are minimal patches built from a decision
// (requestBodies.ts). From client-node kwave takes the kubeconfig (connection and auth), the
// types, and nothing that would load its generated API and models.
import type { CoreV1Event, KubeConfig, V1ConfigMap, V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import { objectAnswer } from './answers.js';
import { realClusterDeps, type ClusterDeps, type ClusterOptions, type PodObserver } from './clusterOptions.js';
import * as configMaps from './configMapRequests.js';
import { servesSubresource } from './discoveryRequests.js';
import { decodePod } from './decode.js';
import * as identity from './identityRequests.js';
import type { KubeError } from './kubeError.js';
import * as leases from './leaseRequests.js';
import type { ObjectWatchEvent } from './listWatch.js';
import * as objects from './objectRequests.js';
import type { FollowedResource, ObjectQuery, WireObject } from './objectRequests.js';
import type { LeaseCallOptions } from './leaseRequests.js';
import * as nodes from './nodeRequests.js';
import { forEachPage, listAllPages, type PageSink } from './pagedList.js';
import { eventsPath } from './paths.js';
import * as pdbs from './pdbRequests.js';
import * as admission from './admissionRequests.js';
import type { WebhookConfiguration } from './admissionRequests.js';
import * as pods from './podRequests.js';
import { DEFAULT_RATE_LIMIT, type RateLimit } from './rateLimit.js';
import { Requester } from './requester.js';
import { conditionPatchBody, eventBody, type EventSpec, type PodConditionPatch } from './requestBodies.js';
import { RequestCounter, type WorkloadResource } from './requestCounter.js';
import type {
  AccessAnswer,
  AccessQuestion,
  RulesAnswer,
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
import { DEFAULT_RETRY_POLICY } from './retry.js';
import { workloadRequest } from './workloadRequests.js';

// Callers take the request shapes from here, beside the class that uses them.
export type * from './requestShapes.js';

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
    const { fetchPage, decode } = pods.podPages(this.requester, namespace, options);
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
    const { fetchPage, decode } = pods.podPages(this.requester, namespace, options, view);
    return forEachPage(fetchPage, decode, onPage);
  }

  /**
   * Creates a pod (pre-pull's pullers; kwave creates no workload pod). Not fed to the pod caches:
   * none holds it yet.
   */
  async createPod(namespace: string, body: object): Promise<V1Pod> {
    return pods.createPod(this.requester, namespace, body);
  }

  /** Deletes a pod at once (grace 0): only pre-pull's finished pullers. 404 → KubeError code 404. */
  async deletePod(namespace: string, name: string): Promise<void> {
    return pods.deletePod(this.requester, namespace, name);
  }

  /** GET one pod (a fresh read, not a cache). 404 → KubeError code 404. */
  async getPod(namespace: string, name: string): Promise<V1Pod> {
    return pods.getPod(this.requester, this.podObservers, namespace, name);
  }

  /**
   * A strategic-merge patch of `pods` with a body built elsewhere (the in-place state machine
   * builds its own, carrying the resourceVersion it decided on).
   */
  async patchPod(namespace: string, name: string, body: object): Promise<V1Pod> {
    return pods.patchPod(this.requester, this.podObservers, namespace, name, body);
  }

  /** A strategic-merge patch of `pods/status` with a body built elsewhere (conditions merge by type). */
  async patchPodStatus(namespace: string, name: string, body: object): Promise<V1Pod> {
    return pods.patchPodStatus(this.requester, this.podObservers, namespace, name, body);
  }

  /** A strategic-merge patch of `pods/resize` (the in-place flow's resize, guarded by its resourceVersion). */
  async resizePod(namespace: string, name: string, body: object): Promise<V1Pod> {
    return pods.resizePod(this.requester, this.podObservers, namespace, name, body);
  }

  /**
   * Whether the server serves `pods/resize` (in-place resize; Kubernetes 1.33+), by discovery
   * (`GET /api/v1`). A resize plan is refused on a server that does not.
   */
  async servesPodResize(): Promise<boolean> {
    return servesSubresource(this.requester, 'pods/resize');
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
    return this.patchPodStatus(namespace, name, conditionPatchBody([condition], this.deps.date()));
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
    return pods.watchPods(this.requester, namespace, query, onEvent, onDone);
  }

  // ---- nodes, PodDisruptionBudgets (policy/v1) and owners -----------------------------------

  /**
   * Every node, page by page, for their zones (`order: spread-zones`). Callers treat a 403 as
   * "no zones": a namespaced Role cannot grant nodes, and kwave needs none to upgrade pods.
   */
  async listNodes(limit = 500): Promise<V1Node[]> {
    return (await this.listNodeList(limit)).items;
  }

  /** Every node with the list's resourceVersion, for a node watch to start from. Pages as listPods does. */
  async listNodeList(limit = 500): Promise<NodeList> {
    return nodes.listNodeList(this.requester, limit);
  }

  /** Streams node changes (cluster-scoped), as watchPods does for pods; one `watch nodes` request. */
  async watchNodes(
    query: WatchNodesQuery,
    onEvent: (event: NodeWatchEvent) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<WatchHandle> {
    return nodes.watchNodes(this.requester, query, onEvent, onDone);
  }

  /** Every PDB of a namespace with the list's resourceVersion (PDBs are few: one page). */
  async listPdbs(namespace: string): Promise<PdbList> {
    return pdbs.listPdbs(this.requester, namespace);
  }

  /** Streams PDB changes in one namespace; one `watch poddisruptionbudgets` request. */
  async watchPdbs(
    namespace: string,
    query: WatchNodesQuery,
    onEvent: (event: PdbWatchEvent) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<WatchHandle> {
    return pdbs.watchPdbs(this.requester, namespace, query, onEvent, onDone);
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
    return workloadRequest(this.requester, verb, resource, namespace, name, body, dryRun);
  }

  // ---- events -------------------------------------------------------------------------------

  /** Records a core/v1 Event (e.g. on a pod, for a failure or a rollback). */
  async createEvent(spec: EventSpec): Promise<CoreV1Event> {
    const namespace = spec.involvedObject.namespace;
    const body = eventBody(spec, this.deps.date(), this.eventSeq++);
    return (await objectAnswer(
      this.requester,
      { verb: 'create', resource: 'events', namespace },
      { method: 'POST', path: eventsPath(namespace), body },
    )) as CoreV1Event;
  }

  // ---- configmaps (the rollout record) ------------------------------------------------------

  /** 404 → KubeError code 404. */
  async getConfigMap(namespace: string, name: string): Promise<V1ConfigMap> {
    return configMaps.getConfigMap(this.requester, namespace, name);
  }

  /** 409 (reason AlreadyExists) when it exists. */
  async createConfigMap(namespace: string, body: V1ConfigMap): Promise<V1ConfigMap> {
    return configMaps.createConfigMap(this.requester, namespace, body);
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
    return configMaps.watchConfigMaps(this.requester, namespace, query, onEvent, onDone);
  }

  /** PUT; with `metadata.resourceVersion` set, 409 if someone wrote in between. */
  async updateConfigMap(namespace: string, body: V1ConfigMap): Promise<V1ConfigMap> {
    return configMaps.updateConfigMap(this.requester, namespace, body);
  }

  /** JSON merge patch (null removes a key); add `metadata.resourceVersion` to make it conditional. */
  async patchConfigMap(namespace: string, name: string, body: ConfigMapMergePatch): Promise<V1ConfigMap> {
    return configMaps.patchConfigMap(this.requester, namespace, name, body);
  }

  // ---- any followed collection (ConfigMaps, Leases, Events of a namespace), as wire JSON ------

  /** Every object of the collection the query selects, with the list's resourceVersion. */
  async listObjects(
    resource: FollowedResource,
    namespace: string,
    query: ObjectQuery = {},
  ): Promise<{ items: WireObject[]; resourceVersion: string }> {
    return objects.listObjects(this.requester, resource, namespace, query);
  }

  /** Streams the collection's changes, as watchPods does for pods; in the control lane. */
  watchObjects(
    resource: FollowedResource,
    namespace: string,
    query: WatchPodsQuery,
    onEvent: (event: ObjectWatchEvent<WireObject>) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<WatchHandle> {
    return objects.watchObjects(this.requester, resource, namespace, query, onEvent, onDone);
  }

  // ---- leases (one runner per plan) ---------------------------------------------------------
  // The control lane (requester.ts): never behind pod traffic. `withinMs`: the answer is worth
  // nothing after that long (the lease's renew deadline), so no attempt or retry outlives it.

  /** 404 → KubeError code 404. acquireTime/renewTime come back as V1MicroTime (Date). */
  async getLease(namespace: string, name: string, options: LeaseCallOptions = {}): Promise<V1Lease> {
    return leases.getLease(this.requester, namespace, name, options);
  }

  /** 409 (AlreadyExists) when another runner created it first. */
  async createLease(namespace: string, body: V1Lease): Promise<V1Lease> {
    return leases.createLease(this.requester, namespace, body);
  }

  /** PUT; `metadata.resourceVersion` is required by the API for leases; 409 if someone renewed in between. */
  async updateLease(namespace: string, body: V1Lease, options: LeaseCallOptions = {}): Promise<V1Lease> {
    return leases.updateLease(this.requester, namespace, body, options);
  }

  /** The validating and mutating webhook configurations (two list requests). */
  async listWebhookConfigurations(): Promise<WebhookConfiguration[]> {
    const [validating, mutating] = await Promise.all([
      admission.listWebhookConfigurations(this.requester, 'validating'),
      admission.listWebhookConfigurations(this.requester, 'mutating'),
    ]);
    return [...validating, ...mutating];
  }

  // ---- who we are, and what we may do -------------------------------------------------------

  /**
   * Asks the API server whether kwave's own identity may do `need` (a SelfSubjectAccessReview,
   * which every authenticated user may create). Undefined when the server has no such API.
   */
  async reviewAccess(need: AccessQuestion): Promise<AccessAnswer | undefined> {
    return identity.reviewAccess(this.requester, need);
  }

  /**
   * The rules kwave's own identity has in `namespace`, cluster-wide ones included (a
   * SelfSubjectRulesReview, which every authenticated user may create). Undefined when the server
   * has no such API.
   */
  async reviewRules(namespace: string): Promise<RulesAnswer | undefined> {
    return identity.reviewRules(this.requester, namespace);
  }

  /**
   * The user name the API server knows this client by (a SelfSubjectReview,
   * authentication.k8s.io/v1, GA since 1.28; any authenticated user may create one). Undefined
   * where the server does not serve it (404) or refuses it (403): callers fall back to the local user.
   */
  async whoAmI(): Promise<string | undefined> {
    return identity.whoAmI(this.requester);
  }
}
