// The simulated kubelet for a set of nodes, over a KubeletPort: it reads pods bound to its nodes,
// runs their containers (containers.ts) and writes pod status and Events, never a pod's spec. A
// change marks one pod dirty; dirty pods are reconciled together on the next turn of the event
// loop, and a pod has at most one write in flight, whose end brings it back for another look.
import { DEFAULT_TIMING, realClock, seededRandom, SimTime, type Clock, type Timing } from '../clock.js';
import type { ImageTable } from '../images.js';
import { PodIpam } from '../ipam.js';
import { jsonEqual } from '../json.js';
import type { ContainerStatus, PodCondition } from '../podStatus.js';
import { frozenCopy, type KubeObject } from '../store.js';
import { ContainerRuntimeModel } from './containers.js';
import { NodeImageCaches } from './imageCaches.js';
import { PodResizer } from './resize.js';
import {
  admitContainers,
  newPodRuntime,
  runningPodRuntime,
  type AdmissionContext,
  type KnownStatus,
} from './podAdmission.js';
import {
  nodeNameOf,
  podKey,
  podStatusFor,
  rfc3339,
  specContainers,
  specHash,
  splitKey,
  type ContainerRuntime,
  type PodRuntime,
} from './pods.js';
import { StaleWrite, type KubeletPort, type MaybeAsync } from './port.js';

export interface KubeletCoreOptions {
  port: KubeletPort;
  images: ImageTable;
  timing?: Partial<Timing>;
  /** Multiplies every simulated duration (0.01 = a hundred times faster). Default 1. */
  timeScale?: number;
  /** Seed of the PRNG behind jitter and container IDs; the same seed replays the same run. */
  seed?: number;
  clock?: Clock;
  /** Called with an unexpected error from a reconcile (a bug); default: rethrown asynchronously. */
  onError?: (err: unknown) => void;
  /** Called when an asynchronous write failed for another reason than a stale view; it is retried. */
  onWriteError?: (err: unknown, pod: string) => void;
  /** Per node name, images its registry mirror lacks (any spelling): pulls of them fail there. */
  missingImages?: Readonly<Record<string, readonly string[]>>;
}

const WRITE_RETRY_MS = 1000; // a failed asynchronous write: the pod is looked at again after this

export class KubeletCore {
  private readonly port: KubeletPort;
  private readonly images: ImageTable;
  private readonly clock: Clock;
  private readonly runtime: ContainerRuntimeModel;
  private readonly imageCaches: NodeImageCaches;
  private readonly admission: AdmissionContext;
  private readonly resizer: PodResizer;
  private readonly onError: (err: unknown) => void;
  private readonly onWriteError: (err: unknown, pod: string) => void;

  private readonly pods = new Map<string, PodRuntime>();
  private readonly podsByNode = new Map<string, Set<string>>();
  /** Nodes whose kubelet has lost contact (the NotReady fault): it writes nothing for them. */
  private readonly nodesDown = new Set<string>();
  /** Per pod key, the uid of the pod this kubelet deleted, until its view sees it gone. */
  private readonly removed = new Map<string, string>();

  private dirty = new Set<string>();
  private flushScheduled: NodeJS.Immediate | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(options: KubeletCoreOptions) {
    this.port = options.port;
    this.images = options.images;
    const timing = { ...DEFAULT_TIMING, ...options.timing };
    const random = seededRandom(options.seed ?? 1);
    const time = new SimTime(options.timeScale ?? 1, timing.jitter, random);
    this.clock = options.clock ?? realClock;
    this.imageCaches = new NodeImageCaches(this.images, options.missingImages ?? {}, () => {
      if (!this.flushScheduled && this.unsubscribe) this.flushScheduled = setImmediate(() => this.flush());
    });
    this.onError =
      options.onError ??
      ((err) =>
        setImmediate(() => {
          throw err;
        }));
    this.onWriteError = options.onWriteError ?? (() => {});
    this.runtime = new ContainerRuntimeModel({
      images: this.images,
      timing,
      time,
      clock: this.clock,
      random,
      imagesOn: (node) => this.imageCaches.imagesOn(node),
      addImage: (node, fullName) => this.imageCaches.add(node, fullName),
      lacks: (node, fullName) => this.imageCaches.lacks(node, fullName),
      event: (rt, c, type, reason, message) => this.event(rt, c, type, reason, message),
      changed: (rt) => this.markDirty(rt.key),
      onError: (err) => this.onError(err),
    });
    this.resizer = new PodResizer({
      runtime: this.runtime,
      time,
      clock: this.clock,
      podsOn: (node) =>
        [...(this.podsByNode.get(node) ?? [])].flatMap((key) => {
          const rt = this.pods.get(key);
          return rt ? [rt] : [];
        }),
      changed: (rt) => this.markDirty(rt.key),
    });
    this.admission = {
      images: this.images,
      runtime: this.runtime,
      ipam: new PodIpam(),
      clock: this.clock,
      addImage: (node, fullName) => this.imageCaches.add(node, fullName),
    };
  }

  /** Starts following the port, and takes up the pods already bound to a node. */
  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.port.subscribe((namespace, name) => this.markDirty(podKey(namespace, name)));
    for (const pod of this.port.pods()) {
      const key = podKey(pod.metadata.namespace, pod.metadata.name);
      // Pods this kubelet created running, unchanged since, need no second look.
      if (this.pods.get(key)?.writtenVersion !== pod.metadata.resourceVersion) this.markDirty(key);
    }
  }

  /** Stops reacting and cancels every pending step; the cluster is left as it is. */
  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.flushScheduled) clearImmediate(this.flushScheduled);
    this.flushScheduled = undefined;
    this.dirty.clear();
    for (const rt of [...this.pods.values()]) this.drop(rt);
  }

  /** Number of pods the kubelet is running. */
  get podCount(): number {
    return this.pods.size;
  }

  /**
   * The runtime of a pod this kubelet "has been running for a while": containers running and
   * ready. Every image must be in the table and pull fine. Register it once the pod is stored.
   */
  runningPod(manifest: KubeObject, node: KubeObject): PodRuntime {
    return runningPodRuntime(this.admission, manifest, node);
  }

  /** The status a pod has while its runtime `rt` runs it. */
  statusOf(rt: PodRuntime, manifest: KubeObject, conditions: readonly PodCondition[]): Record<string, unknown> {
    return podStatusFor(rt, manifest, conditions, rfc3339(this.clock.now()));
  }

  /** Takes `rt` as the runtime of the stored pod `pod` (as written by the kubelet itself). */
  register(rt: PodRuntime, pod: KubeObject): void {
    rt.uid = pod.metadata.uid ?? '';
    rt.writtenVersion = pod.metadata.resourceVersion;
    this.pods.set(rt.key, rt);
    let set = this.podsByNode.get(rt.node);
    if (!set) this.podsByNode.set(rt.node, (set = new Set()));
    set.add(rt.key);
  }

  /**
   * The NotReady fault: a node down writes nothing (status, Events) until it is back; then its
   * pods are looked at again.
   */
  setNodeDown(nodeName: string, down: boolean): void {
    if (down) {
      this.nodesDown.add(nodeName);
      return;
    }
    this.nodesDown.delete(nodeName);
    if (this.imageCaches.changedOn(nodeName) && !this.flushScheduled && this.unsubscribe)
      this.flushScheduled = setImmediate(() => this.flush());
    for (const key of this.podsByNode.get(nodeName) ?? []) this.markDirty(key);
    // Pods bound to the node but not yet taken up (e.g. created while it was down) too.
    for (const pod of this.port.pods())
      if (nodeNameOf(pod) === nodeName) this.markDirty(podKey(pod.metadata.namespace, pod.metadata.name));
  }

  /**
   * The "container crashed" fault on pod `namespace/name`: its container `container` (default:
   * the first) exits and is restarted. False when the pod or a running container is not this
   * kubelet's, or its node is down.
   */
  crashContainer(namespace: string, name: string, container?: string): boolean {
    const rt = this.pods.get(podKey(namespace, name));
    if (!rt || rt.terminating || this.nodesDown.has(rt.node)) return false;
    const c = container === undefined ? rt.containers.values().next().value : rt.containers.get(container);
    return c ? this.runtime.crash(rt, c) : false;
  }

  isNodeDown(nodeName: string): boolean {
    return this.nodesDown.has(nodeName);
  }

  // ---- reconciling ----

  private markDirty(key: string): void {
    this.dirty.add(key);
    if (!this.flushScheduled && this.unsubscribe) this.flushScheduled = setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = undefined;
    this.reportImages();
    const batch = this.dirty;
    this.dirty = new Set();
    for (const key of batch) {
      try {
        this.reconcile(key);
      } catch (err) {
        if (err instanceof StaleWrite)
          this.markDirty(key); // raced with another writer: look again
        else this.onError(err);
      }
    }
  }

  private reconcile(key: string): void {
    const { namespace, name } = splitKey(key);
    const pod = this.port.pod(namespace, name);
    let rt = this.pods.get(key);
    if (rt?.inFlight) return; // its end brings the pod back here
    if (!pod) {
      if (rt) this.drop(rt);
      this.removed.delete(key);
      return;
    }
    if (this.removed.has(key)) {
      if (this.removed.get(key) === pod.metadata.uid) return; // deleted by this kubelet; the view lags
      this.removed.delete(key);
    }
    if (rt && rt.uid !== pod.metadata.uid) {
      this.drop(rt);
      rt = undefined;
    }
    const nodeName = nodeNameOf(pod);
    if (!nodeName) return; // not scheduled: no kubelet's business yet
    if (this.nodesDown.has(nodeName)) return;
    const node = this.port.node(nodeName);
    // Not one of this kubelet's nodes — unless it runs the pod already: a kubelet whose Node
    // object was deleted goes on running (and reporting) its pods until they are deleted.
    if (!node && !rt) return;
    if (!rt) rt = this.admit(pod, node!);
    else if (!rt.terminating) this.syncSpec(rt, pod);
    if (!rt.terminating && node) this.resizer.sync(rt, pod, node); // a deleted Node: no capacity to admit against
    if (pod.metadata.deletionTimestamp && !rt.terminating)
      this.runtime.beginTermination(rt, pod.metadata.deletionGracePeriodSeconds ?? 30);
    if (rt.terminated) {
      const phase = (pod.status as { phase?: string } | undefined)?.phase;
      const terminal = phase === 'Succeeded' || phase === 'Failed';
      if (terminal && !pod.metadata.finalizers?.length) {
        this.remove(rt, pod);
        return;
      }
      // Once the terminal status is written, come back to remove the pod. With finalizers left,
      // wait instead for whoever removes them (their write brings the pod back here).
      if (!terminal) this.markDirty(key);
    }
    this.writeStatus(rt, pod);
  }

  /** A pod newly bound to a node: take up containers already running (per its status), start the others. */
  private admit(pod: KubeObject, node: KubeObject): PodRuntime {
    const status = (pod.status ?? {}) as KnownStatus;
    const rt = newPodRuntime(this.admission, pod, node, status, new Map());
    this.register(rt, { ...pod, metadata: { ...pod.metadata, resourceVersion: undefined } });
    admitContainers(this.admission, rt, pod, node, status);
    return rt;
  }

  /** Restarts every container whose spec hash changed (the image was patched), or meets its current spec again. */
  private syncSpec(rt: PodRuntime, pod: KubeObject): void {
    for (const spec of specContainers(pod)) {
      const c = rt.containers.get(spec.name);
      if (!c) continue; // the API server refuses added containers; nothing to do
      const hash = specHash(spec);
      if (hash !== c.hash || c.next !== undefined) this.runtime.restart(rt, c, spec, hash);
    }
  }

  /** Writes the pod's status if it differs from the stored one. */
  private writeStatus(rt: PodRuntime, pod: KubeObject): void {
    const current = (pod.status ?? {}) as { conditions?: PodCondition[] };
    const status = this.statusOf(rt, pod, current.conditions ?? []);
    if (jsonEqual(status, pod.status)) return;
    // A server may store a status in another spelling than written (defaults, field order):
    // the same status again on top of the kubelet's own last write is no change.
    if (rt.writtenVersion === pod.metadata.resourceVersion && jsonEqual(rt.writtenStatus, status)) return;
    const written = this.frozenStatus(rt, status);
    this.track(rt, this.port.writeStatus(pod, written), (rv) => {
      rt.writtenVersion = rv;
      rt.writtenStatus = written;
    });
  }

  /**
   * `status` frozen, and the runtime's container statuses replaced by their frozen copies in it
   * (they are replaced, never changed in place): the in-memory store keeps frozen parts as they
   * are, so the stored status, the kubelet's record of its last write and its runtime share one
   * copy (at 50,000 pods, 2.7 KB a pod were held twice).
   */
  frozenStatus(rt: PodRuntime, status: Record<string, unknown>): Record<string, unknown> {
    const frozen = frozenCopy(status);
    for (const cs of (frozen.containerStatuses ?? []) as ContainerStatus[]) {
      const c = rt.containers.get(cs.name);
      if (c) c.status = cs;
    }
    return frozen;
  }

  /** The kubelet's final DELETE (grace 0, uid precondition) once the containers stopped. */
  private remove(rt: PodRuntime, pod: KubeObject): void {
    const done = () => this.drop(rt);
    const result = this.port.removePod(pod);
    if (!(result instanceof Promise)) {
      done();
      return;
    }
    this.removed.set(rt.key, rt.uid);
    this.track(rt, result, done, () => this.removed.delete(rt.key));
  }

  /** Applies a write's outcome now, or when its promise settles (then looks at the pod again). */
  private track<T>(rt: PodRuntime, result: MaybeAsync<T>, onDone: (value: T) => void, onFailed?: () => void): void {
    if (!(result instanceof Promise)) {
      onDone(result);
      return;
    }
    rt.inFlight = true;
    result.then(
      (value) => {
        rt.inFlight = false;
        onDone(value);
        this.markDirty(rt.key);
      },
      (err: unknown) => {
        rt.inFlight = false;
        onFailed?.();
        if (err instanceof StaleWrite) {
          this.markDirty(rt.key);
          return;
        }
        this.onWriteError(err, rt.key);
        this.clock.setTimeout(() => this.markDirty(rt.key), WRITE_RETRY_MS);
      },
    );
  }

  private event(
    rt: PodRuntime,
    c: ContainerRuntime | undefined,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): void {
    if (this.nodesDown.has(rt.node)) return; // a cut-off kubelet cannot post events either
    const pod = this.port.pod(rt.namespace, rt.name);
    if (!pod || pod.metadata.uid !== rt.uid) return;
    this.port.event({
      pod,
      fieldPath: c ? `spec.containers{${c.spec.name}}` : undefined,
      type,
      reason,
      message,
      host: rt.node,
    });
  }

  private drop(rt: PodRuntime): void {
    this.runtime.drop(rt);
    if (this.pods.get(rt.key) === rt) this.pods.delete(rt.key);
    this.podsByNode.get(rt.node)?.delete(rt.key);
    if (this.unsubscribe) this.resizer.released(rt.node);
  }

  /**
   * Reports the nodes' image caches that changed (status.images), as the kubelet's node status
   * does; now rather than on the next turn.
   */
  reportImages(): void {
    this.imageCaches.report(
      this.port,
      (node) => this.nodesDown.has(node),
      (err, what) => this.onWriteError(err, what),
    );
  }
}
