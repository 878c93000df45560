// What test/e2e/cluster.test.ts and pod-cache.test.ts share: an API server of either backend with
// the admin client as the other writer (startApi), and the embedded API server over a bare store
// for the tests that need injected faults (startSim).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { connect, type ConnectOptions } from '../../../src/cluster/connect.js';
import type { Cluster } from '../../../src/cluster/cluster.js';
import { startApiServer } from '../../../src/sim/apiserver/index.js';
import { parseFaults, type Faults } from '../../../src/sim/faults.js';
import { SimStats } from '../../../src/sim/stats.js';
import { Store, type KubeObject } from '../../../src/sim/store.js';
import { BACKEND, embeddedOnly } from './backend.js';
import { startApiOnly, type ApiOnly } from './apiOnly.js';

export const GATE = 'kwave.dev/in-place-ready';

export function makePod(
  name: string,
  namespace = 'default',
  labels: Record<string, string> = { app: 'demo' },
  image = 'nginx:1.14.2',
): KubeObject {
  const digest = 'a'.repeat(64);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: {
      nodeName: 'node-a',
      containers: [{ name: 'nginx', image }],
      readinessGates: [{ conditionType: GATE }],
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: GATE, status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' },
        { type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' },
      ],
      containerStatuses: [
        {
          name: 'nginx',
          image: `docker.io/library/${image}`,
          imageID: `docker.io/library/nginx@sha256:${digest}`,
          containerID: `containerd://${'c'.repeat(64)}`,
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: '2025-01-01T00:00:00Z' } },
        },
      ],
    },
  };
}

/** Changes a pod in the store the way another writer would (new resourceVersion, watch event). */
// The pod cache keeps only kwave's own annotations (kwave.dev/…): short keys here are under it.
const annotationKey = (key: string) => (key.includes('/') ? key : `kwave.dev/${key}`);

export function touch(store: Store, namespace: string, name: string, annotations: Record<string, string>): KubeObject {
  const cur = store.get('pods', namespace, name)!;
  const next = structuredClone(cur) as KubeObject;
  next.metadata.annotations = {
    ...(next.metadata.annotations ?? {}),
    ...Object.fromEntries(Object.entries(annotations).map(([k, v]) => [annotationKey(k), v])),
  };
  return store.update('pods', next);
}

export const annotation = (pod: V1Pod | undefined, key: string) => pod?.metadata?.annotations?.[annotationKey(key)];

export interface Sim {
  store: Store;
  stats: SimStats;
  faults: Faults;
  kubeconfigFile: string;
  connect(options?: ConnectOptions): Cluster;
  close(): Promise<void>;
}

export async function startSim(historySize?: number, faultSpec = ''): Promise<Sim> {
  const store = new Store(historySize === undefined ? {} : { historySize });
  const stats = new SimStats();
  const faults = parseFaults(faultSpec);
  const server = await startApiServer({ store, stats, faults, port: 0 });
  const dir = mkdtempSync(path.join(tmpdir(), 'kwave-cluster-e2e-'));
  const kubeconfigFile = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfigFile, server.kubeconfig());
  const clusters: Cluster[] = [];
  return {
    store,
    stats,
    faults,
    kubeconfigFile,
    connect(options = {}) {
      const c = connect({ kubeconfig: kubeconfigFile, env: {}, ...options });
      clusters.push(c);
      return c;
    },
    async close() {
      for (const c of clusters) c.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A sleep that returns at once and records the waits: retries without real time. */
export function instantSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => (waits.push(ms), true) };
}

export const FAULTS_EMBEDDED = embeddedOnly(
  'needs injected API faults (errors, watch cuts), which only the embedded API server has: no fault proxy in front of kube-apiserver',
);

/** An API server of either backend, with the admin as the other writer. */
export interface Api {
  api: ApiOnly;
  connect(options?: ConnectOptions): Cluster;
  /** Creates a namespace (if new) where pods can be created. */
  namespace(name: string): Promise<void>;
  putPod(name: string, namespace?: string, labels?: Record<string, string>): Promise<KubeObject>;
  /** Another client's change: annotations merged by a PATCH. */
  touch(namespace: string, name: string, annotations: Record<string, string>): Promise<void>;
  removePod(namespace: string, name: string): Promise<void>;
  get<T = KubeObject>(path: string): Promise<T>;
  /** Requests the server counted, where it can tell at once (embedded); undefined on real. */
  counted(key: string): number | undefined;
  resetCounts(): void;
  close(): Promise<void>;
}

export async function startApi(): Promise<Api> {
  const api = await startApiOnly();
  const clusters: Cluster[] = [];
  return {
    api,
    connect(options = {}) {
      const c = connect({ kubeconfig: api.kubeconfigPath, env: {}, ...options });
      clusters.push(c);
      return c;
    },
    async namespace(name) {
      await api.http
        .request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
        .catch((err: { code?: number }) => {
          if (err.code !== 409) throw err;
        });
      // kube-apiserver's ServiceAccount admission refuses pods until the controller-manager has
      // made the namespace's default account (the embedded server has no such plugin).
      if (BACKEND === 'real') {
        const deadline = Date.now() + 180_000;
        for (;;) {
          const found = await api.http.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`).then(
            () => true,
            () => false,
          );
          if (found) break;
          if (Date.now() > deadline) throw new Error(`namespace ${name}: no default ServiceAccount`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    putPod: (name, namespace = 'default', labels = { app: 'demo' }) => api.putRunningPod(name, { namespace, labels }),
    async touch(namespace, name, annotations) {
      const keyed = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [annotationKey(k), v]));
      await api.http.request(
        'PATCH',
        `/api/v1/namespaces/${namespace}/pods/${name}`,
        { metadata: { annotations: keyed } },
        'application/merge-patch+json',
      );
    },
    async removePod(namespace, name) {
      await api.http.request('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}?gracePeriodSeconds=0`, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds: 0,
      });
    },
    get: (path) => api.http.request('GET', path),
    counted: (key) => (api.embeddedStats ? (api.embeddedStats.snapshot().requests[key] ?? 0) : undefined),
    resetCounts: () => api.embeddedStats?.reset(),
    async close() {
      for (const c of clusters) c.close();
      await api.close();
    },
  };
}
