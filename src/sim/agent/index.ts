// The node agent: kwave's simulated kubelet for a set of nodes, speaking only HTTP to an API
// server (a real kube-apiserver, or the embedded simulator's with its own kubelet off). It
// registers the nodes and renews their leases (nodes.ts), watches the pods bound to them
// (podWatch.ts), and runs them with the one kubelet model (kubelet/core.ts) over HttpPort.
import type { Clock, Timing } from '../clock.js';
import { realClock } from '../clock.js';
import type { FixtureNode } from '../fixture.js';
import type { ImageTable } from '../images.js';
import { KubeletCore } from '../kubelet/core.js';
import type { KubeObject } from '../store.js';
import { HttpEventRecorder } from './eventRecorder.js';
import { HttpPort } from './httpPort.js';
import { KubeHttp } from './kubeHttp.js';
import { NodeSet } from './nodes.js';
import { PodWatch } from './podWatch.js';

export interface NodeAgentOptions {
  /** The API server, `https://host:port`, its CA and the agent's bearer token. */
  url: string;
  caPem: string;
  token: string;
  nodes: readonly FixtureNode[];
  podsPerNode?: ReadonlyMap<string, number>;
  images: ImageTable;
  timing?: Partial<Timing>;
  timeScale?: number;
  seed?: number;
  clock?: Clock;
  missingImages?: Readonly<Record<string, readonly string[]>>;
  /** Lease renewal period (default 10 s, as a kubelet's). */
  leaseRenewMs?: number;
  /** How often a node's Ready condition is checked against the API and reasserted (default 10 s). */
  nodeStatusCheckMs?: number;
  /** Told of retried problems (connection errors, refused writes). Default: ignored. */
  onWarning?: (message: string) => void;
  /** A bug in the kubelet model. Default: rethrown asynchronously. */
  onError?: (err: unknown) => void;
}

export interface NodeAgent {
  /** The pods bound to any node, as the agent's watch sees them now. */
  pods(): IterableIterator<KubeObject>;
  pod(namespace: string, name: string): KubeObject | undefined;
  /** Told of every pod that changed or went. */
  subscribe(listener: (namespace: string, name: string) => void): () => void;
  nodeNames(): string[];
  /** The NotReady fault: the node's kubelet goes silent (false) or comes back (true). */
  setNodeReady(name: string, ready: boolean): Promise<void>;
  isNodeReady(name: string): boolean;
  /** The "container crashed" fault (the agent's kubelet model only; see KubeletCore.crashContainer). */
  crashContainer?(namespace: string, name: string, container?: string): boolean;
  readonly podCount: number;
  close(): Promise<void>;
}

/** Registers the nodes, syncs the pod watch and starts the kubelet; resolves once all three are done. */
export async function startNodeAgent(options: NodeAgentOptions): Promise<NodeAgent> {
  const clock = options.clock ?? realClock;
  const warn = options.onWarning ?? (() => {});
  const http = new KubeHttp({
    url: options.url,
    caPem: options.caPem,
    token: options.token,
    userAgent: 'kwave-node-agent/kubelet',
  });
  const nodes = new NodeSet(http, {
    nodes: options.nodes,
    podsPerNode: options.podsPerNode,
    now: () => clock.now(),
    onWarning: warn,
    renewMs: options.leaseRenewMs,
    statusCheckMs: options.nodeStatusCheckMs,
  });
  const events = new HttpEventRecorder(http, () => clock.now(), warn);
  let watch: PodWatch | undefined;
  let core: KubeletCore | undefined;
  const close = async () => {
    core?.stop();
    watch?.close();
    nodes.close();
    await events.flushed();
    http.close();
  };
  try {
    await nodes.register();
    watch = new PodWatch(http, { onWarning: warn });
    await watch.synced;
    const port = new HttpPort(http, watch, (name) => nodes.get(name), events);
    core = new KubeletCore({
      port,
      images: options.images,
      timing: options.timing,
      timeScale: options.timeScale,
      seed: options.seed,
      clock,
      missingImages: options.missingImages,
      onError: options.onError,
      onWriteError: (err, pod) => warn(`status of ${pod}: ${(err as Error).message}; retrying`),
    });
    core.start();
  } catch (err) {
    await close();
    throw err;
  }
  const w = watch;
  const k = core;
  let closing: Promise<void> | undefined;
  return {
    pods: () => w.values(),
    pod: (namespace, name) => w.get(namespace, name),
    subscribe: (listener) => w.subscribe(listener),
    nodeNames: () => nodes.names(),
    setNodeReady: async (name, ready) => {
      // Silent first, then reported: no status write of its pods slips in after the fault.
      if (!ready) k.setNodeDown(name, true);
      await nodes.setReady(name, ready);
      if (ready) k.setNodeDown(name, false);
    },
    isNodeReady: (name) => nodes.isReady(name),
    crashContainer: (namespace, name, container) => k.crashContainer(namespace, name, container),
    get podCount() {
      return k.podCount;
    },
    close: () => (closing ??= close()),
  };
}
