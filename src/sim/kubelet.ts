// The simulated kubelet (one for every node in the store). It acts only as a kubelet does: it
// reads pods bound to its nodes, runs their containers in a pretend container runtime, and
// writes pod status (and Events) back through the store, never touching a pod's spec.
//
// Per pod it keeps the containers' state and the hash of each container's spec. A changed hash
// (the image was patched) kills that container and starts a new one from the new image: new
// containerID, restartCount + 1, lastState.terminated, imageID from the image table. Pulls can
// fail (ErrImagePull → ImagePullBackOff), images can crash (CrashLoopBackOff), be slow to become
// ready, or share a digest. Ready = every container ready AND every readiness gate's condition
// True, recomputed whenever anyone changes the pod's conditions.
//
// Work is event-driven and per pod: a store change marks that one pod dirty, and dirty pods are
// reconciled together on the next turn of the event loop. Nothing walks all pods on a change.
import { backOffMs, DEFAULT_TIMING, goDuration, randomHex, realClock, seededRandom, SimTime, type Clock, type Timing } from './clock.js';
import { EventRecorder } from './events.js';
import { imageIdOf, ImageTable, parseImageRef, pullNotFoundError, type ImageInfo, type ImageRef } from './images.js';
import { PodIpam } from './ipam.js';
import { jsonEqual, jsonHash } from './json.js';
import { podConditions, podPhase, type ContainerStatus, type PodCondition } from './podStatus.js';
import { StoreError, type Change, type KubeObject, type Store } from './store.js';

export interface KubeletOptions {
  store: Store;
  images: ImageTable;
  timing?: Partial<Timing>;
  /** Multiplies every simulated duration (0.01 = a hundred times faster). Default 1. */
  timeScale?: number;
  /** Seed of the PRNG behind jitter and container IDs; the same seed replays the same run. */
  seed?: number;
  clock?: Clock;
  /** Events kept in the store at most (oldest dropped first). Default 20,000. */
  maxEvents?: number;
  /** Called with an unexpected error from a reconcile (a bug); default: rethrown asynchronously. */
  onError?: (err: unknown) => void;
  /**
   * Per node name, images its registry mirror lacks (any spelling of the reference): pulls of
   * them fail on that node as for an unknown tag; other nodes pull them fine.
   */
  missingImages?: Readonly<Record<string, readonly string[]>>;
}

/** The parts of a container spec the kubelet reads. */
interface ContainerSpec {
  name: string;
  image: string;
  imagePullPolicy?: string;
  [key: string]: unknown;
}

interface ContainerRuntime {
  spec: ContainerSpec;
  /** Hash of the spec the current (or next) container runs; a different one means restart. */
  hash: string;
  status: ContainerStatus;
  /** Bumped whenever the container's lifecycle starts over; stale timer callbacks see it and stop. */
  epoch: number;
  timer?: unknown;
  pullFailures: number;
  crashes: number;
}

interface PodRuntime {
  key: string;
  uid: string;
  namespace: string;
  name: string;
  node: string;
  hostIP: string;
  podIP: string;
  startTime: string;
  containers: Map<string, ContainerRuntime>;
  sandboxReady: boolean;
  /** Deletion seen: containers are being stopped. */
  terminating: boolean;
  /** Every container stopped; the pod waits to be removed. */
  terminated: boolean;
  podTimer?: unknown;
  alive: boolean;
  /** resourceVersion of the kubelet's own last write of the pod. */
  writtenVersion?: string;
}

const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');
const podKey = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

function specContainers(pod: KubeObject): ContainerSpec[] {
  const spec = pod.spec as { containers?: ContainerSpec[] } | undefined;
  return spec?.containers ?? [];
}

function readinessGates(pod: KubeObject): string[] {
  const spec = pod.spec as { readinessGates?: { conditionType: string }[] } | undefined;
  return (spec?.readinessGates ?? []).map((g) => g.conditionType);
}

function nodeInternalIP(node: KubeObject | undefined): string {
  const status = node?.status as { addresses?: { type: string; address: string }[] } | undefined;
  return status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '10.0.0.1';
}

/** The pull policy the API server defaults: Always for `:latest` or no tag, else IfNotPresent. */
function pullPolicy(spec: ContainerSpec, ref: ImageRef): string {
  if (spec.imagePullPolicy) return spec.imagePullPolicy;
  return !ref.digest && ref.tag === 'latest' ? 'Always' : 'IfNotPresent';
}

export class Kubelet {
  private readonly store: Store;
  private readonly images: ImageTable;
  private readonly timing: Timing;
  private readonly time: SimTime;
  private readonly random: () => number;
  private readonly clock: Clock;
  private readonly events: EventRecorder;
  private readonly ipam = new PodIpam();
  private readonly onError: (err: unknown) => void;

  private readonly pods = new Map<string, PodRuntime>();
  private readonly podsByNode = new Map<string, Set<string>>();
  /** Images present on each node (normalised names). */
  private readonly nodeImages = new Map<string, Set<string>>();
  /** Nodes whose kubelet has lost contact (the NotReady fault). */
  private readonly nodesDown = new Set<string>();
  /** Per node, normalised names of the images its registry mirror lacks. */
  private readonly missingImages = new Map<string, Set<string>>();

  private dirty = new Set<string>();
  private flushScheduled: NodeJS.Immediate | undefined;
  /** > 0 while the kubelet itself writes to the store: its own changes need no reaction. */
  private writing = 0;
  private unsubscribe: (() => void) | undefined;

  constructor(options: KubeletOptions) {
    this.store = options.store;
    this.images = options.images;
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.random = seededRandom(options.seed ?? 1);
    this.time = new SimTime(options.timeScale ?? 1, this.timing.jitter, this.random);
    this.clock = options.clock ?? realClock;
    this.events = new EventRecorder(this.store, () => this.clock.now(), options.maxEvents);
    for (const [node, images] of Object.entries(options.missingImages ?? {})) {
      const names = images.map((i) => parseImageRef(i)).filter((r): r is ImageRef => !('error' in r)).map((r) => r.fullName);
      this.missingImages.set(node, new Set(names));
    }
    this.onError =
      options.onError ??
      ((err) =>
        setImmediate(() => {
          throw err;
        }));
  }

  /** Starts watching the store, and takes up the pods already bound to a node. */
  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.store.subscribe((change) => this.onChange(change));
    for (const pod of this.store.list('pods')) {
      const key = podKey(pod.metadata.namespace, pod.metadata.name);
      // Pods this kubelet created running, unchanged since, need no second look.
      if (this.pods.get(key)?.writtenVersion !== pod.metadata.resourceVersion) this.markDirty(key);
    }
  }

  /** Stops reacting and cancels every pending step; the store is left as it is. */
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
   * Creates a pod that this kubelet has been running for a while: containers running and ready,
   * status filled in. This is how the world starts: a real cluster kwave meets is already running.
   * Every image must be in the table and pull fine.
   */
  createRunningPod(manifest: KubeObject, customConditions: PodCondition[] = []): KubeObject {
    const nodeName = (manifest.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!nodeName) throw new Error(`pod ${manifest.metadata.name}: spec.nodeName is required`);
    const node = this.store.get('nodes', undefined, nodeName);
    if (!node) throw new Error(`pod ${manifest.metadata.name}: node ${nodeName} does not exist`);
    const now = rfc3339(this.clock.now());
    const cache = this.imagesOn(nodeName);
    const containers = new Map<string, ContainerRuntime>();
    for (const spec of specContainers(manifest)) {
      const ref = parseImageRef(spec.image);
      const info = 'error' in ref ? undefined : this.images.resolve(ref);
      if ('error' in ref || !info || info.pullFails || info.crash) throw new Error(`pod ${manifest.metadata.name}: image "${spec.image}" cannot run`);
      cache.add(ref.fullName);
      containers.set(spec.name, {
        spec,
        hash: jsonHash(spec),
        epoch: 0,
        pullFailures: 0,
        crashes: 0,
        status: {
          name: spec.name,
          state: { running: { startedAt: now } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: ref.fullName,
          imageID: imageIdOf(info),
          containerID: this.newContainerId(),
          started: true,
        },
      });
    }
    const rt: PodRuntime = {
      key: podKey(manifest.metadata.namespace, manifest.metadata.name),
      uid: '',
      namespace: manifest.metadata.namespace ?? 'default',
      name: manifest.metadata.name,
      node: nodeName,
      hostIP: nodeInternalIP(node),
      podIP: this.ipam.allocate(nodeName, (node.spec as { podCIDR?: string } | undefined)?.podCIDR),
      startTime: now,
      containers,
      sandboxReady: true,
      terminating: false,
      terminated: false,
      alive: true,
    };
    const status = this.statusFor(rt, manifest, customConditions);
    const created = this.write(() => this.store.create('pods', { ...manifest, status }));
    rt.uid = created.metadata.uid ?? '';
    rt.writtenVersion = created.metadata.resourceVersion;
    this.register(rt);
    return created;
  }

  /**
   * The NotReady fault: the node's kubelet loses contact. Its Ready condition turns Unknown (as
   * the node controller marks a silent node), it gets the `unreachable` taints, its pods' Ready
   * turns False, and its kubelet writes nothing until the node is back. Containers keep running.
   */
  setNodeReady(nodeName: string, ready: boolean): void {
    const node = this.store.get('nodes', undefined, nodeName);
    if (!node) throw new StoreError('NotFound', 'nodes', nodeName);
    if (ready) this.nodesDown.delete(nodeName);
    else this.nodesDown.add(nodeName);
    this.write(() => this.store.update('nodes', nodeWithReadiness(node, ready, rfc3339(this.clock.now()))));
    for (const key of this.podsByNode.get(nodeName) ?? []) this.markDirty(key);
    // Pods bound to the node but not yet taken up (e.g. created while it was down) too.
    if (ready) for (const pod of this.store.list('pods')) if ((pod.spec as { nodeName?: string }).nodeName === nodeName) this.markDirty(podKey(pod.metadata.namespace, pod.metadata.name));
  }

  isNodeReady(nodeName: string): boolean {
    return !this.nodesDown.has(nodeName);
  }

  // ---- reacting to the store ----

  private onChange(change: Change): void {
    if (this.writing > 0 || change.resource !== 'pods') return;
    this.markDirty(podKey(change.object.metadata.namespace, change.object.metadata.name));
  }

  private markDirty(key: string): void {
    this.dirty.add(key);
    if (!this.flushScheduled && this.unsubscribe) this.flushScheduled = setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = undefined;
    const batch = this.dirty;
    this.dirty = new Set();
    for (const key of batch) {
      try {
        this.reconcile(key);
      } catch (err) {
        if (err instanceof StoreError) this.markDirty(key); // raced with another writer: look again
        else this.onError(err);
      }
    }
  }

  private reconcile(key: string): void {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const pod = this.store.get('pods', namespace || undefined, name);
    let rt = this.pods.get(key);
    if (!pod) {
      if (rt) this.drop(rt);
      return;
    }
    if (rt && rt.uid !== pod.metadata.uid) {
      this.drop(rt);
      rt = undefined;
    }
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!nodeName) return; // not scheduled: no kubelet's business yet
    if (this.nodesDown.has(nodeName)) {
      this.markNotReadyByNodeController(pod);
      return;
    }
    const node = this.store.get('nodes', undefined, nodeName);
    if (!node) return; // bound to a node that does not exist: no kubelet will ever run it
    if (!rt) rt = this.admit(pod, node);
    else if (!rt.terminating) this.syncSpec(rt, pod);
    if (pod.metadata.deletionTimestamp && !rt.terminating) this.beginTermination(rt, pod);
    if (rt.terminated) {
      const phase = (pod.status as { phase?: string } | undefined)?.phase;
      const terminal = phase === 'Succeeded' || phase === 'Failed';
      if (terminal && !pod.metadata.finalizers?.length) {
        // As the kubelet's final DELETE with grace 0 and a uid precondition.
        this.write(() => this.store.remove('pods', rt.namespace, rt.name, rt.uid));
        this.drop(rt);
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
    const status = (pod.status ?? {}) as { startTime?: string; podIP?: string; containerStatuses?: ContainerStatus[] };
    const nodeName = node.metadata.name;
    const rt: PodRuntime = {
      key: podKey(pod.metadata.namespace, pod.metadata.name),
      uid: pod.metadata.uid ?? '',
      namespace: pod.metadata.namespace ?? 'default',
      name: pod.metadata.name,
      node: nodeName,
      hostIP: nodeInternalIP(node),
      podIP: status.podIP ?? this.ipam.allocate(nodeName, (node.spec as { podCIDR?: string } | undefined)?.podCIDR),
      startTime: status.startTime ?? rfc3339(this.clock.now()),
      containers: new Map(),
      sandboxReady: true,
      terminating: false,
      terminated: false,
      alive: true,
    };
    this.register(rt);
    for (const spec of specContainers(pod)) {
      const known = status.containerStatuses?.find((s) => s.name === spec.name);
      const ref = parseImageRef(spec.image);
      const c: ContainerRuntime = {
        spec,
        hash: jsonHash(spec),
        epoch: 0,
        pullFailures: 0,
        crashes: 0,
        status: { name: spec.name, state: { waiting: { reason: 'ContainerCreating' } }, lastState: {}, ready: false, restartCount: 0, image: spec.image, imageID: '', started: false },
      };
      rt.containers.set(spec.name, c);
      if (known?.state.running && !('error' in ref) && known.image === ref.fullName) {
        // Already running (the kubelet restarted, or the world made it so): carry on with it.
        c.status = structuredClone(known);
        this.imagesOn(nodeName).add(ref.fullName);
        const info = this.images.resolve(ref);
        if (info?.crash) this.scheduleCrash(rt, c);
        else if (!c.status.ready) this.scheduleReady(rt, c, info);
      } else if (!pod.metadata.deletionTimestamp) {
        this.beginStart(rt, c);
      }
    }
    return rt;
  }

  /** Restarts every container whose spec hash changed (the image was patched). */
  private syncSpec(rt: PodRuntime, pod: KubeObject): void {
    for (const spec of specContainers(pod)) {
      const c = rt.containers.get(spec.name);
      if (!c) continue; // the API server refuses added containers; nothing to do
      const hash = jsonHash(spec);
      if (hash === c.hash) continue;
      this.restart(rt, c, spec, hash);
    }
  }

  // ---- a container's life ----

  private restart(rt: PodRuntime, c: ContainerRuntime, spec: ContainerSpec, hash: string): void {
    this.cancel(c);
    c.spec = spec;
    c.hash = hash;
    // The kubelet's back-offs are keyed by the container's spec (and image): a new spec starts afresh.
    c.pullFailures = 0;
    c.crashes = 0;
    const running = c.status.state.running;
    if (!running) {
      this.beginStart(rt, c);
      return;
    }
    this.event(rt, c, 'Normal', 'Killing', `Container ${c.spec.name} definition changed, will be restarted`);
    this.after(rt, c, this.time.step(this.timing.stopMs), () => {
      this.terminate(c, 0, 'Completed');
      this.beginStart(rt, c);
    });
  }

  /** Pull if needed, then create and start the container from its spec's image. */
  private beginStart(rt: PodRuntime, c: ContainerRuntime): void {
    const image = c.spec.image;
    const ref = parseImageRef(image);
    if ('error' in ref) {
      const message = `Failed to apply default image tag "${image}": ${ref.error}`;
      this.setWaiting(c, 'InvalidImageName', message);
      this.event(rt, c, 'Warning', 'InspectFailed', message);
      this.event(rt, c, 'Warning', 'Failed', 'Error: InvalidImageName');
      return;
    }
    const present = this.imagesOn(rt.node).has(ref.fullName);
    const policy = pullPolicy(c.spec, ref);
    if (policy === 'Never' && !present) {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      this.setWaiting(c, 'ErrImageNeverPull', message);
      this.event(rt, c, 'Warning', 'ErrImageNeverPull', message);
      return;
    }
    if (policy !== 'Always' && present) {
      this.event(rt, c, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
      this.after(rt, c, this.time.step(this.timing.startMs), () => this.create(rt, c, ref));
      return;
    }
    this.pull(rt, c, ref);
  }

  private pull(rt: PodRuntime, c: ContainerRuntime, ref: ImageRef): void {
    const image = c.spec.image;
    const info = this.images.resolve(ref);
    const ms = this.time.step(info?.pullMs ?? this.timing.pullMs);
    this.event(rt, c, 'Normal', 'Pulling', `Pulling image "${image}"`);
    this.after(rt, c, ms, () => {
      if (!info || info.pullFails || this.missingImages.get(rt.node)?.has(info.fullName)) {
        this.pullFailed(rt, c, ref);
        return;
      }
      this.imagesOn(rt.node).add(ref.fullName);
      const took = goDuration(Math.round(ms * 1e6) / 1e6);
      this.event(rt, c, 'Normal', 'Pulled', `Successfully pulled image "${image}" in ${took} (${took} including waiting). Image size: ${info.sizeBytes} bytes.`);
      this.after(rt, c, this.time.step(this.timing.startMs), () => this.create(rt, c, ref));
    });
  }

  /** ErrImagePull now, ImagePullBackOff a moment later, another pull once the back-off (10s, 20s … 5m) is over. */
  private pullFailed(rt: PodRuntime, c: ContainerRuntime, ref: ImageRef): void {
    const image = c.spec.image;
    const error = pullNotFoundError(ref.fullName);
    c.pullFailures++;
    this.event(rt, c, 'Warning', 'Failed', `Failed to pull image "${image}": ${error}`);
    this.event(rt, c, 'Warning', 'Failed', 'Error: ErrImagePull');
    this.setWaiting(c, 'ErrImagePull', error);
    const backOff = this.time.exact(backOffMs(c.pullFailures));
    const shown = Math.min(this.time.exact(1000), backOff / 2);
    this.after(rt, c, shown, () => {
      const message = `Back-off pulling image "${image}"`;
      this.setWaiting(c, 'ImagePullBackOff', message);
      this.event(rt, c, 'Normal', 'BackOff', message);
      this.event(rt, c, 'Warning', 'Failed', 'Error: ImagePullBackOff');
      this.after(rt, c, backOff - shown, () => this.pull(rt, c, ref));
    });
  }

  private create(rt: PodRuntime, c: ContainerRuntime, ref: ImageRef): void {
    const info = this.images.resolve(ref);
    if (!info) {
      // The image left the node meanwhile (cannot happen today); treat as a failed pull.
      this.pullFailed(rt, c, ref);
      return;
    }
    const previous = c.status;
    const ranBefore = previous.containerID !== undefined;
    const now = rfc3339(this.clock.now());
    const containerID = this.newContainerId();
    c.status = {
      name: c.spec.name,
      state: { running: { startedAt: now } },
      lastState: previous.state.terminated ? { terminated: previous.state.terminated } : previous.lastState,
      ready: false,
      restartCount: ranBefore ? previous.restartCount + 1 : previous.restartCount,
      image: ref.fullName,
      imageID: imageIdOf(info),
      containerID,
      started: true,
    };
    this.event(rt, c, 'Normal', 'Created', `Created container: ${c.spec.name}`);
    this.event(rt, c, 'Normal', 'Started', `Started container ${c.spec.name}`);
    if (info.crash) this.scheduleCrash(rt, c);
    else this.scheduleReady(rt, c, info);
  }

  private scheduleReady(rt: PodRuntime, c: ContainerRuntime, info: ImageInfo | undefined): void {
    this.after(rt, c, this.time.step(info?.readyAfterMs ?? this.timing.readyMs), () => {
      c.status = { ...c.status, ready: true };
    });
  }

  /**
   * A crashing image exits with code 1 before it is ever ready. The first crash restarts at once;
   * later ones wait a back-off of 10s, 20s, 40s … 5m (CrashLoopBackOff), as the kubelet does.
   */
  private scheduleCrash(rt: PodRuntime, c: ContainerRuntime): void {
    this.after(rt, c, this.time.step(this.timing.crashMs), () => {
      c.crashes++;
      this.terminate(c, 1, 'Error');
      if (c.crashes === 1) {
        this.beginStart(rt, c);
        return;
      }
      const backOff = backOffMs(c.crashes - 1);
      const who = `${rt.name}_${rt.namespace}(${rt.uid})`;
      this.setWaiting(c, 'CrashLoopBackOff', `back-off ${goDuration(backOff)} restarting failed container=${c.spec.name} pod=${who}`);
      this.event(rt, c, 'Warning', 'BackOff', `Back-off restarting failed container ${c.spec.name} in pod ${who}`);
      this.after(rt, c, this.time.exact(backOff), () => this.beginStart(rt, c));
    });
  }

  /** The running container exits; its status shows the termination until the next one starts. */
  private terminate(c: ContainerRuntime, exitCode: number, reason: string): void {
    const running = c.status.state.running;
    if (!running) return;
    c.status = {
      ...c.status,
      state: {
        terminated: { exitCode, reason, startedAt: running.startedAt, finishedAt: rfc3339(this.clock.now()), containerID: c.status.containerID },
      },
      ready: false,
      started: false,
    };
  }

  /** Waiting state; a termination shown so far moves to lastState, as the kubelet reports it. */
  private setWaiting(c: ContainerRuntime, reason: string, message?: string): void {
    const s = c.status;
    c.status = {
      ...s,
      state: { waiting: message ? { reason, message } : { reason } },
      lastState: s.state.terminated ? { terminated: s.state.terminated } : s.lastState,
      ready: false,
      started: false,
    };
  }

  // ---- deletion ----

  /** Graceful deletion: stop the containers, report the terminal phase, then remove the pod. */
  private beginTermination(rt: PodRuntime, pod: KubeObject): void {
    rt.terminating = true;
    for (const c of rt.containers.values()) {
      this.cancel(c);
      if (c.status.state.running) this.event(rt, c, 'Normal', 'Killing', `Stopping container ${c.spec.name}`);
    }
    const grace = pod.metadata.deletionGracePeriodSeconds ?? 30;
    // Containers stop as fast as nginx does on SIGTERM, not after the full grace period.
    const ms = Math.min(this.time.step(this.timing.stopMs), this.time.exact(grace * 1000));
    rt.podTimer = this.clock.setTimeout(() => {
      rt.podTimer = undefined;
      if (!rt.alive) return;
      for (const c of rt.containers.values()) this.terminate(c, 0, 'Completed');
      rt.sandboxReady = false;
      rt.terminated = true;
      this.markDirty(rt.key);
    }, ms);
  }

  // ---- status ----

  private statusFor(rt: PodRuntime, pod: KubeObject, conditionsNow: readonly PodCondition[]): Record<string, unknown> {
    const specs = specContainers(pod);
    const statuses = specs.map((s) => rt.containers.get(s.name)?.status).filter((s): s is ContainerStatus => s !== undefined);
    const now = rfc3339(this.clock.now());
    const old = (pod.status ?? {}) as Record<string, unknown>;
    return {
      ...old,
      phase: podPhase(statuses, rt.terminated),
      conditions: podConditions(conditionsNow, { specNames: specs.map((s) => s.name), statuses, gates: readinessGates(pod), sandboxReady: rt.sandboxReady }, now),
      hostIP: rt.hostIP,
      hostIPs: [{ ip: rt.hostIP }],
      podIP: rt.podIP,
      podIPs: [{ ip: rt.podIP }],
      startTime: rt.startTime,
      containerStatuses: statuses,
      qosClass: old.qosClass ?? 'BestEffort',
    };
  }

  /** Writes the pod's status if it differs from the stored one; everything else is kept. */
  private writeStatus(rt: PodRuntime, pod: KubeObject): void {
    const current = (pod.status ?? {}) as { conditions?: PodCondition[] };
    const status = this.statusFor(rt, pod, current.conditions ?? []);
    if (jsonEqual(status, pod.status)) return;
    rt.writtenVersion = this.write(() => this.store.update('pods', { ...pod, status }, pod.metadata.resourceVersion)).metadata.resourceVersion;
  }

  /** What the node controller does to the pods of a silent node: Ready → False, nothing else. */
  private markNotReadyByNodeController(pod: KubeObject): void {
    const conditions = ((pod.status as { conditions?: PodCondition[] } | undefined)?.conditions ?? []) as PodCondition[];
    if (!conditions.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    const now = rfc3339(this.clock.now());
    const updated = conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' as const, lastTransitionTime: now } : c));
    this.write(() => this.store.update('pods', { ...pod, status: { ...(pod.status as object), conditions: updated } }, pod.metadata.resourceVersion));
  }

  // ---- plumbing ----

  /** Runs `fn` after `ms` unless the container's lifecycle has moved on; then reconciles the pod. */
  private after(rt: PodRuntime, c: ContainerRuntime, ms: number, fn: () => void): void {
    this.cancel(c, false);
    const epoch = c.epoch;
    c.timer = this.clock.setTimeout(() => {
      c.timer = undefined;
      if (!rt.alive || c.epoch !== epoch) return;
      try {
        fn();
      } catch (err) {
        this.onError(err);
      }
      this.markDirty(rt.key);
    }, ms);
  }

  private cancel(c: ContainerRuntime, newEpoch = true): void {
    if (c.timer !== undefined) this.clock.clearTimeout(c.timer);
    c.timer = undefined;
    if (newEpoch) c.epoch++;
  }

  private event(rt: PodRuntime, c: ContainerRuntime | undefined, type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (this.nodesDown.has(rt.node)) return; // a cut-off kubelet cannot post events either
    const pod = this.store.get('pods', rt.namespace, rt.name);
    if (!pod || pod.metadata.uid !== rt.uid) return;
    this.write(() =>
      this.events.record({
        object: pod,
        fieldPath: c ? `spec.containers{${c.spec.name}}` : undefined,
        type,
        reason,
        message,
        source: { component: 'kubelet', host: rt.node },
      }),
    );
  }

  private write<T>(fn: () => T): T {
    this.writing++;
    try {
      return fn();
    } finally {
      this.writing--;
    }
  }

  private register(rt: PodRuntime): void {
    this.pods.set(rt.key, rt);
    let set = this.podsByNode.get(rt.node);
    if (!set) {
      set = new Set();
      this.podsByNode.set(rt.node, set);
    }
    set.add(rt.key);
  }

  private drop(rt: PodRuntime): void {
    rt.alive = false;
    if (rt.podTimer !== undefined) this.clock.clearTimeout(rt.podTimer);
    for (const c of rt.containers.values()) this.cancel(c);
    if (this.pods.get(rt.key) === rt) this.pods.delete(rt.key);
    this.podsByNode.get(rt.node)?.delete(rt.key);
  }

  private imagesOn(node: string): Set<string> {
    let set = this.nodeImages.get(node);
    if (!set) {
      set = new Set();
      this.nodeImages.set(node, set);
    }
    return set;
  }

  private newContainerId(): string {
    return `containerd://${randomHex(this.random, 64)}`;
  }
}

/** The node as the node controller leaves it when its kubelet goes silent, or as the kubelet reports it when back. */
export function nodeWithReadiness(node: KubeObject, ready: boolean, now: string): KubeObject {
  const status = (node.status ?? {}) as { conditions?: PodCondition[] };
  const spec = (node.spec ?? {}) as { taints?: { key: string; effect: string; timeAdded?: string }[] };
  const unreachable = 'node.kubernetes.io/unreachable';
  const conditions = (status.conditions ?? []).map((c) => {
    if (!ready) {
      return { ...c, status: 'Unknown' as const, reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: c.status === 'Unknown' ? c.lastTransitionTime : now };
    }
    const healthy = NODE_HEALTHY[c.type];
    if (!healthy) return c;
    return { ...c, ...healthy, lastHeartbeatTime: now, lastTransitionTime: c.status === healthy.status ? c.lastTransitionTime : now };
  });
  const others = (spec.taints ?? []).filter((t) => t.key !== unreachable);
  const taints = ready ? others : [...others, { key: unreachable, effect: 'NoSchedule', timeAdded: now }, { key: unreachable, effect: 'NoExecute', timeAdded: now }];
  const newSpec: Record<string, unknown> = { ...spec, taints };
  if (taints.length === 0) delete newSpec.taints;
  return { ...node, spec: newSpec, status: { ...status, conditions } };
}

/** A healthy node's conditions, as its kubelet reports them. */
export const NODE_HEALTHY: Record<string, { status: 'True' | 'False'; reason: string; message: string }> = {
  MemoryPressure: { status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  DiskPressure: { status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  PIDPressure: { status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  Ready: { status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
};
