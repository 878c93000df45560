// How kwave asks for its pods' apps/v1 owners (ReplicaSets, Deployments, StatefulSets,
// DaemonSets): one GET or strategic-merge PATCH, as wire JSON for owners.ts to decode.
import { PatchStrategy } from '@kubernetes/client-node';
import type { Requester } from './requester.js';
import type { WorkloadResource } from './requestCounter.js';

export async function workloadRequest(
  requester: Requester,
  verb: 'get' | 'patch',
  resource: WorkloadResource,
  namespace: string,
  name: string,
  body: object | undefined,
  dryRun: boolean,
): Promise<unknown> {
  const path = `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/${resource}/${encodeURIComponent(name)}`;
  if (verb === 'get') return requester.wire({ verb: 'get', resource, namespace }, { method: 'GET', path });
  return requester.wire(
    { verb: 'patch', resource, namespace },
    {
      method: 'PATCH',
      path,
      body: body ?? {},
      contentType: PatchStrategy.StrategicMergePatch,
      ...(dryRun ? { query: { dryRun: 'All' } } : {}),
    },
  );
}
