// Which cluster the end-to-end suites run against: KWAVE_TEST_BACKEND=embedded (default: the
// simulator's own API server and kubelet, in this process) or real (etcd, kube-apiserver,
// controller-manager and scheduler built by `npm run build:control-plane`, with kwave's node
// agent as the kubelet) or kubelet (that control plane with one real kubelet process per node,
// as `kwave sim --control-plane real --kubelet real` runs it; suites see it as the real backend).
// Suites read the cluster through TestSim only, so the same assertions run on every backend. One real control plane serves a whole test file (each file is its own process):
// a world's close() empties it for the next world, and the last close stops it.
import type { KubeObject } from '../../../src/sim/store.js';
import { startSim, type Sim, type SimOptions } from '../../../src/sim/index.js';
import type { ImageTable } from '../../../src/sim/images.js';
import type { WorldSummary } from '../../../src/sim/world.js';
import type { ControlPlane } from '../../../src/sim/controlPlane/index.js';
import { findControlPlaneBinary } from '../../../src/sim/controlPlane/index.js';
import { KubeHttp } from '../../../src/sim/agent/kubeHttp.js';
import { startOwnControlPlane, startRealSim, type KubeletKind, type RealSim } from '../../../src/sim/real/index.js';
import { resetRealWorld } from '../../../src/sim/real/reset.js';

export type Backend = 'embedded' | 'real';

function backendOf(value: string | undefined): Backend {
  if (value === undefined || value === '' || value === 'embedded') return 'embedded';
  if (value === 'real' || value === 'kubelet') return 'real';
  throw new Error(`KWAVE_TEST_BACKEND: expected embedded, real or kubelet, found "${value}"`);
}

export const BACKEND: Backend = backendOf(process.env.KWAVE_TEST_BACKEND);
/** Which kubelet runs the real backend's nodes: kwave's node agent, or real kubelet processes (KWAVE_TEST_BACKEND=kubelet). */
const KUBELET: KubeletKind = process.env.KWAVE_TEST_BACKEND === 'kubelet' ? 'real' : 'simulated';

/** Why a suite cannot run on the real backend, as a `skip` option (the runner prints and counts it). */
export function embeddedOnly(why: string): string | false {
  return BACKEND === 'real' ? `embedded backend only: ${why}` : false;
}

/** For suites that need no cluster (or start none of a backend's): they run once, on the embedded pass. */
export const noClusterOnReal: string | false = embeddedOnly(
  'no cluster of a backend involved: runs once, on the embedded pass',
);

/** The real backend's own skip reason: no control-plane build. */
export const realNotBuilt: string | false = (() => {
  if (BACKEND !== 'real') return false;
  const found = findControlPlaneBinary();
  return 'reason' in found ? `real backend: ${found.reason}` : false;
})();

export interface TestSim {
  backend: Backend;
  url: string;
  metricsUrl: string;
  token: string;
  caPem: string;
  kubeconfig(opts?: { context?: string; namespace?: string }): string;
  images: ImageTable;
  world: WorldSummary;
  /** Pods of a namespace as the cluster holds them now (embedded: its store; real: the node agent's watch). */
  listPods(namespace?: string): KubeObject[];
  getPod(namespace: string, name: string): KubeObject | undefined;
  /** Events of a namespace, read from the API. */
  events(namespace?: string): Promise<KubeObject[]>;
  /** Calls `listener` with every new version of the pod (embedded: each store write; real: the agent's watch). */
  watchPod(namespace: string, name: string, listener: (pod: KubeObject) => void): () => void;
  /** Another client adds labels to a pod, unseen by /sim/stats (embedded: in the store; real: as the node agent). */
  labelPodUncounted(namespace: string, name: string, labels: Record<string, string>): Promise<void>;
  /** The embedded simulator, for what only it can do (its store, live API faults); undefined on real. */
  embedded: Sim | undefined;
  real: RealSim | undefined;
  close(): Promise<void>;
}

interface Held {
  cp: Promise<ControlPlane>;
  users: number;
  stopTimer?: NodeJS.Timeout;
}
let shared: Held | undefined;
/** Control planes of worlds started while the shared one was taken (two worlds at once). */
const extra = new Map<Promise<ControlPlane>, Held>();

/**
 * Control planes start one after another: the launcher picks free ports before its components
 * bind them, and two launches at once can pick the same port.
 */
let starting: Promise<unknown> = Promise.resolve();
function startSerially(): Promise<ControlPlane> {
  const next = starting.then(() => startOwnControlPlane());
  starting = next.catch(() => undefined);
  return next;
}

/** This file's control plane: started on first use, stopped a moment after its last world closes. A second world at once gets one of its own. */
export function acquireControlPlane(): Promise<ControlPlane> {
  if (shared && shared.users > 0) {
    const own: Held = { cp: startSerially(), users: 1 };
    extra.set(own.cp, own);
    return own.cp;
  }
  if (shared?.stopTimer) clearTimeout(shared.stopTimer);
  shared ??= { cp: startSerially(), users: 0 };
  shared.stopTimer = undefined;
  shared.users++;
  return shared.cp;
}

export function releaseControlPlane(which?: Promise<ControlPlane>): void {
  const own = which && extra.get(which);
  if (own) {
    extra.delete(which);
    void own.cp.then((cp) => cp.close());
    return;
  }
  const s = shared;
  if (!s) return;
  s.users--;
  if (s.users > 0) return;
  // A next test of the file usually starts at once; give it the chance to reuse this one.
  s.stopTimer = setTimeout(() => {
    if (shared === s && s.users === 0) {
      shared = undefined;
      void s.cp.then((cp) => cp.close());
    }
  }, 2000);
}

const byName = (a: KubeObject, b: KubeObject) => a.metadata.name.localeCompare(b.metadata.name);

/** Starts the world of `options` on the selected backend. */
export async function startTestSim(options: SimOptions = {}): Promise<TestSim> {
  if (BACKEND === 'embedded') {
    const sim = await startSim(options);
    return {
      backend: 'embedded',
      url: sim.url,
      metricsUrl: sim.metricsUrl,
      token: sim.token,
      caPem: sim.caPem,
      kubeconfig: (k) => sim.kubeconfig(k),
      images: sim.images,
      world: sim.world,
      listPods: (namespace = 'default') => sim.store.list('pods', namespace),
      getPod: (namespace, name) => sim.store.get('pods', namespace, name),
      events: async (namespace = 'default') => sim.store.list('events', namespace),
      watchPod: (namespace, name, listener) =>
        sim.store.subscribe((c) => {
          if (c.resource === 'pods' && c.object.metadata.namespace === namespace && c.object.metadata.name === name)
            listener(c.object);
        }),
      labelPodUncounted: async (namespace, name, labels) => {
        const cur = structuredClone(sim.store.get('pods', namespace, name)!) as KubeObject;
        sim.store.update('pods', {
          ...cur,
          metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, ...labels } },
        });
      },
      embedded: sim,
      real: undefined,
      close: () => sim.close(),
    };
  }
  if (options.faults) throw new Error('startTestSim: API faults are embedded-only; skip the test on the real backend');
  const held = acquireControlPlane();
  let sim: RealSim;
  let cp: ControlPlane;
  try {
    cp = await held;
    sim = await startRealSim({
      pods: options.pods,
      fixture: options.fixture,
      kubeconfigOut: options.kubeconfigOut,
      timeScale: options.timeScale,
      seed: options.seed,
      metricsPort: options.metricsPort,
      sharedControlPlane: cp,
      kubelet: KUBELET,
    });
  } catch (err) {
    releaseControlPlane(held);
    throw err;
  }
  const admin = new KubeHttp({ url: cp.url, caPem: cp.caPem, token: cp.adminToken, userAgent: 'kwave-e2e' });
  const asAgent = new KubeHttp({
    url: cp.url,
    caPem: cp.caPem,
    token: cp.agentToken,
    userAgent: 'kwave-e2e/other-writer',
  });
  let closing: Promise<void> | undefined;
  return {
    backend: 'real',
    url: sim.url,
    metricsUrl: sim.metricsUrl,
    token: sim.token,
    caPem: sim.caPem,
    kubeconfig: (k) => sim.kubeconfig(k),
    images: sim.images,
    world: sim.world,
    listPods: (namespace = 'default') =>
      [...sim.agent.pods()].filter((p) => p.metadata.namespace === namespace).sort(byName),
    getPod: (namespace, name) => sim.agent.pod(namespace, name),
    events: async (namespace = 'default') =>
      (await admin.request<{ items: KubeObject[] }>('GET', `/api/v1/namespaces/${namespace}/events`)).items,
    watchPod: (namespace, name, listener) =>
      sim.agent.subscribe((ns, n) => {
        const pod = ns === namespace && n === name ? sim.agent.pod(ns, n) : undefined;
        if (pod) listener(pod);
      }),
    labelPodUncounted: async (namespace, name, labels) => {
      await asAgent.request(
        'PATCH',
        `/api/v1/namespaces/${namespace}/pods/${name}`,
        { metadata: { labels } },
        'application/merge-patch+json',
      );
    },
    embedded: undefined,
    real: sim,
    close: () =>
      (closing ??= (async () => {
        await sim.close();
        await resetRealWorld(admin);
        admin.close();
        asAgent.close();
        releaseControlPlane(held);
      })()),
  };
}
