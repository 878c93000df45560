// An API server with no kubelet, on the backend KWAVE_TEST_BACKEND selects (embedded: the
// simulator's API server over an empty store; real: this file's control plane, emptied, with no
// node agent), and pods placed through the API as a kubelet would have reported them: created,
// then their status written on pods/status. The same requests on both backends.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeHttp } from '../../../src/sim/agent/kubeHttp.js';
import { resetRealWorld } from '../../../src/sim/real/reset.js';
import type { KubeObject } from '../../../src/sim/store.js';
import type { SimStats } from '../../../src/sim/stats.js';
import { acquireControlPlane, BACKEND, releaseControlPlane } from './backend.js';
import { runningStatus, startSimApi, type PodSpec } from './simApi.js';

export interface ApiOnly {
  kc: KubeConfig;
  kubeconfigPath: string;
  dir: string;
  /** An admin client. */
  http: KubeHttp;
  getPod(name: string, namespace?: string): Promise<KubeObject | undefined>;
  /** The embedded API server's own request counts; undefined on real (its audit log lags the answers). */
  embeddedStats: SimStats | undefined;
  /** A running, Ready pod as a kubelet would have reported it (create, then its status). */
  putRunningPod(name: string, spec?: PodSpec): Promise<KubeObject>;
  close(): Promise<void>;
}

export async function startApiOnly(): Promise<ApiOnly> {
  let url: string;
  let caPem: string;
  let token: string;
  let kubeconfig: string;
  let stop: () => Promise<void>;
  let embeddedStats: SimStats | undefined;
  if (BACKEND === 'embedded') {
    const sim = await startSimApi();
    embeddedStats = sim.stats;
    ({ url, caPem, token } = sim.api);
    kubeconfig = sim.api.kubeconfig();
    stop = () => sim.close();
  } else {
    const held = acquireControlPlane();
    const cp = await held;
    ({ url, caPem } = cp);
    token = cp.adminToken;
    kubeconfig = cp.kubeconfig();
    stop = async () => {
      await resetRealWorld(http);
      releaseControlPlane(held);
    };
  }
  const http = new KubeHttp({ url, caPem, token, userAgent: 'kwave-e2e' });
  const dir = mkdtempSync(join(tmpdir(), 'kwave-api-only-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  return {
    kc,
    kubeconfigPath,
    dir,
    http,
    embeddedStats,
    getPod: (name, namespace = 'default') =>
      http
        .request<KubeObject>('GET', `/api/v1/namespaces/${namespace}/pods/${name}`)
        .catch((err: { code?: number }) => {
          if (err.code === 404) return undefined;
          throw err;
        }),
    putRunningPod: async (name, spec = {}) => {
      const ns = spec.namespace ?? 'default';
      const containers = spec.containers ?? [{ name: 'nginx', image: 'nginx:1.14.2' }];
      const gate = spec.gate ?? true;
      const started = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      await http.request('POST', `/api/v1/namespaces/${ns}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: ns, labels: spec.labels ?? { app: 'demo' } },
        spec: {
          ...(spec.nodeName === undefined ? { nodeName: 'node-a' } : spec.nodeName ? { nodeName: spec.nodeName } : {}),
          containers: containers.map((c) => ({ ...c, imagePullPolicy: 'IfNotPresent' })),
          ...(gate ? { readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }] } : {}),
        },
      });
      const status = runningStatus(containers, gate, started);
      return http.request<KubeObject>(
        'PATCH',
        `/api/v1/namespaces/${ns}/pods/${name}/status`,
        { status },
        'application/strategic-merge-patch+json',
      );
    },
    close: async () => {
      await stop();
      http.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
