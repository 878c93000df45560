// Starts the simulated API server in-process for a test, with pods placed straight into its store
// (as a kubelet-run cluster would hold them), a kubeconfig file for kubectl, and a client-node
// KubeConfig.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../src/sim/apiserver/index.js';
import { NO_FAULTS, type Faults } from '../../../src/sim/faults.js';
import { SimStats } from '../../../src/sim/stats.js';
import { Store, type KubeObject } from '../../../src/sim/store.js';

export interface SimApi {
  store: Store;
  stats: SimStats;
  faults: Faults;
  api: ApiServer;
  kc: KubeConfig;
  kubeconfigPath: string;
  dir: string;
  close(): Promise<void>;
}

export async function startSimApi(opts: { historySize?: number; bookmarkIntervalMs?: number } = {}): Promise<SimApi> {
  const store = new Store({ historySize: opts.historySize ?? 10_000 });
  const stats = new SimStats();
  const faults: Faults = { ...NO_FAULTS, errorCodes: [...NO_FAULTS.errorCodes] };
  const api = await startApiServer({ store, stats, faults, bookmarkIntervalMs: opts.bookmarkIntervalMs });
  const dir = mkdtempSync(join(tmpdir(), 'kwave-sim-api-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const text = api.kubeconfig();
  writeFileSync(kubeconfigPath, text, { mode: 0o600 });
  const kc = new KubeConfig();
  kc.loadFromString(text);
  return {
    store,
    stats,
    faults,
    api,
    kc,
    kubeconfigPath,
    dir,
    async close() {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PodSpec {
  namespace?: string;
  labels?: Record<string, string>;
  nodeName?: string;
  containers?: {
    name: string;
    image: string;
    ports?: { containerPort: number; protocol?: string }[];
    env?: { name: string; value: string }[];
  }[];
  gate?: boolean;
}

/** A running, Ready pod as a kubelet would have reported it, placed straight into the store. */
export function putRunningPod(store: Store, name: string, spec: PodSpec = {}): KubeObject {
  const containers = spec.containers ?? [{ name: 'nginx', image: 'nginx:1.14.2' }];
  const gate = spec.gate ?? true;
  const started = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return store.create('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: spec.namespace ?? 'default', labels: spec.labels ?? { app: 'demo' } },
    spec: {
      ...(spec.nodeName === undefined ? { nodeName: 'node-a' } : spec.nodeName ? { nodeName: spec.nodeName } : {}),
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      containers: containers.map((c) => ({
        ...c,
        imagePullPolicy: 'IfNotPresent',
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        resources: {},
      })),
      ...(gate ? { readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }] } : {}),
    },
    status: { ...runningStatus(containers, gate, started), qosClass: 'BestEffort' },
  });
}

/**
 * The status a kubelet reports for a pod whose containers all run and are Ready, since `started`
 * (RFC 3339, whole seconds), with the in-place gate True when the pod declares it.
 */
export function runningStatus(
  containers: readonly { name: string; image: string }[],
  gate: boolean,
  started: string,
): Record<string, unknown> {
  return {
    phase: 'Running',
    podIP: '10.0.0.10',
    hostIP: '192.168.0.10',
    startTime: started,
    conditions: [
      ...(gate
        ? [{ type: 'kwave.dev/in-place-ready', status: 'True', lastProbeTime: null, lastTransitionTime: started }]
        : []),
      { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: started },
      { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: started },
    ],
    containerStatuses: containers.map((c, i) => ({
      name: c.name,
      ready: true,
      started: true,
      restartCount: 0,
      image: `docker.io/library/${c.image}`,
      imageID: `docker.io/library/${c.image.split(':')[0]}@sha256:${String(i).padStart(64, 'a')}`,
      containerID: `containerd://${String(i).padStart(64, 'c')}`,
      state: { running: { startedAt: started } },
    })),
  };
}
