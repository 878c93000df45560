// Empties a real control plane for the next world, so that a test file can start one control
// plane and seed many worlds on it: every pod removed at once (grace 0: no kubelet is left to
// finish a graceful deletion), the nodes unregistered, and kwave's records, leases, the PDBs and the
// Events of the namespaces dropped. Namespaces stay (their deletion takes the namespace controller a while).
import { KubeHttpError, type KubeHttp } from '../agent/kubeHttp.js';
import type { KubeObject } from '../store.js';

const ignoreMissing = (err: unknown) => {
  if (!(err instanceof KubeHttpError && err.code === 404)) throw err;
};

export async function resetRealWorld(admin: KubeHttp): Promise<void> {
  const namespaces = (await admin.request<{ items: KubeObject[] }>('GET', '/api/v1/namespaces')).items
    .map((n) => n.metadata.name)
    .filter((n) => n !== 'kube-system' && n !== 'kube-node-lease' && n !== 'kube-public');
  const now = { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 };
  // Workloads first, orphaning their pods (deleted at once below), or their controllers would make new ones.
  const orphan = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Orphan' };
  for (const ns of namespaces) {
    for (const plural of ['deployments', 'replicasets', 'statefulsets', 'daemonsets', 'controllerrevisions']) {
      await admin.request('DELETE', `/apis/apps/v1/namespaces/${ns}/${plural}`, orphan).catch(ignoreMissing);
    }
  }
  for (const ns of namespaces) {
    await admin.request('DELETE', `/api/v1/namespaces/${ns}/pods?gracePeriodSeconds=0`, now).catch(ignoreMissing);
    await admin.request('DELETE', `/api/v1/namespaces/${ns}/events`).catch(ignoreMissing);
    await admin.request('DELETE', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`).catch(ignoreMissing);
    await admin.request('DELETE', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`).catch(ignoreMissing);
    // kube-root-ca.crt is the controller-manager's; everything else is a test's.
    const cms = (await admin.request<{ items: KubeObject[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`)).items;
    for (const cm of cms)
      if (cm.metadata.name !== 'kube-root-ca.crt')
        await admin.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/${cm.metadata.name}`).catch(ignoreMissing);
  }
  for (const node of (await admin.request<{ items: KubeObject[] }>('GET', '/api/v1/nodes')).items) {
    await admin.request('DELETE', `/api/v1/nodes/${node.metadata.name}`).catch(ignoreMissing);
    await admin
      .request('DELETE', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node.metadata.name}`)
      .catch(ignoreMissing);
  }
  // Wait until the pods are really gone, so the next world's names are free.
  for (const ns of namespaces) {
    for (let i = 0; i < 300; i++) {
      const left = (await admin.request<{ items: KubeObject[] }>('GET', `/api/v1/namespaces/${ns}/pods?limit=1`)).items
        .length;
      if (left === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
