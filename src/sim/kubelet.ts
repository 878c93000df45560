// The embedded simulator's kubelet: the kubelet model (kubelet/core.ts) over the in-memory store
// (kubelet/storePort.ts), one for every node in the store, plus what only the embedded backend
// needs: pods created already running (the world's seeding) and the NotReady fault, where the
// simulator plays the node controller too (nodeController.ts).
import { realClock, type Clock, type Timing } from './clock.js';
import type { ImageTable } from './images.js';
import { KubeletCore } from './kubelet/core.js';
import { StorePort } from './kubelet/storePort.js';
import { setEmbeddedNodeReady } from './nodeController.js';
import type { PodCondition } from './podStatus.js';
import { frozenCopy, type KubeObject, type Store } from './store.js';

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

export class Kubelet {
  private readonly store: Store;
  private readonly port: StorePort;
  private readonly core: KubeletCore;
  private readonly clock: Clock;

  constructor(options: KubeletOptions) {
    this.store = options.store;
    this.clock = options.clock ?? realClock;
    this.port = new StorePort(options.store, () => this.clock.now(), options.maxEvents);
    this.core = new KubeletCore({ ...options, port: this.port, clock: this.clock });
  }

  /** Starts watching the store, and takes up the pods already bound to a node. */
  start(): void {
    this.core.start();
  }

  /** Stops reacting and cancels every pending step; the store is left as it is. */
  stop(): void {
    this.core.stop();
  }

  /** Number of pods the kubelet is running. */
  get podCount(): number {
    return this.core.podCount;
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
    // Frozen, the manifest and status are stored as they are, shared with the kubelet's runtime.
    const frozen = frozenCopy(manifest);
    const rt = this.core.runningPod(frozen, node);
    const status = this.core.frozenStatus(rt, this.core.statusOf(rt, frozen, customConditions));
    const created = this.port.createPod({ ...frozen, status });
    this.core.register(rt, created);
    return created;
  }

  /**
   * The NotReady fault: the node's kubelet loses contact. Its Ready condition turns Unknown (as
   * the node controller marks a silent node), it gets the `unreachable` taints, its pods' Ready
   * turns False, and its kubelet writes nothing until the node is back. Containers keep running.
   */
  setNodeReady(nodeName: string, ready: boolean): void {
    setEmbeddedNodeReady(this.store, this.core, nodeName, ready, this.clock.now(), (fn) => this.port.write(fn));
  }

  /** The "container crashed" fault (see KubeletCore.crashContainer). */
  crashContainer(namespace: string, name: string, container?: string): boolean {
    return this.core.crashContainer(namespace, name, container);
  }

  /** Writes the nodes' status.images now (the world's seeding, so nodes start with their images reported). */
  reportImages(): void {
    this.core.reportImages();
  }

  isNodeReady(nodeName: string): boolean {
    return !this.core.isNodeDown(nodeName);
  }
}
