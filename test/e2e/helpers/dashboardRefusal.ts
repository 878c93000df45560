// A person whom the API server refuses the dashboard's writes, on each backend. Real: a
// ServiceAccount `viewer` that may read ConfigMaps, Leases and Events of `default` and nothing
// more (a Role and its RoleBinding), with a token from the TokenRequest API in a kubeconfig of
// its own: RBAC refuses its approval. Embedded (the simulator has no authorizer): the admin's
// kubeconfig, with admission rules that refuse the writes of the plan's decisions ConfigMap (its
// create — the record exists by then, and a create names nothing in its path — and its update)
// with a 403 as a webhook would; `lift` takes them away.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeHttp } from '../../../src/sim/agent/kubeHttp.js';
import { renderKubeconfig } from '../../../src/sim/apiserver/kubeconfig.js';
import type { Fleet } from './rolloutCli.js';

export interface RefusedUser {
  kubeconfig: string;
  lift(): Promise<void>;
}

export async function refusedUser(fleet: Fleet, record: string): Promise<RefusedUser> {
  const embedded = fleet.sim.embedded;
  if (embedded) {
    embedded.admission.set([
      { verb: 'create', resource: 'configmaps', refuse: 403 },
      { verb: 'update', resource: 'configmaps', name: `${record}.control`, refuse: 403 },
    ]);
    return { kubeconfig: fleet.kubeconfig, lift: async () => embedded.admission.set([]) };
  }
  const admin = new KubeHttp({ url: fleet.sim.url, token: fleet.sim.token, caPem: fleet.sim.caPem });
  const ns = 'default';
  const meta = { name: 'viewer', namespace: ns };
  await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: meta,
  });
  await admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: meta,
    rules: [
      { apiGroups: [''], resources: ['configmaps', 'events'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] },
    ],
  });
  await admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: meta,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'viewer' },
    subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: ns }],
  });
  const answer = await admin.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${ns}/serviceaccounts/viewer/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  const kubeconfig = join(fleet.dir, 'viewer.kubeconfig');
  await writeFile(
    kubeconfig,
    renderKubeconfig({ server: fleet.sim.url, caPem: fleet.sim.caPem, token: answer.status.token, namespace: ns }),
  );
  return { kubeconfig, lift: async () => undefined };
}
