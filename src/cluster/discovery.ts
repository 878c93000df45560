// What the API server serves, from its discovery documents, for APIs that not every Kubernetes
// release kwave supports has: the pods/resize subresource (in-place resize; served from 1.33 on
// while the InPlacePodVerticalScaling feature gate is on, its default, and always from 1.35).
// Every authenticated user may read discovery (the system:discovery role): no RBAC rule of its own.
import { objectAnswer } from './answers.js';
import type { Requester } from './requester.js';

interface ApiResourceList {
  resources?: { name?: unknown }[];
}

/** The names of the core group's resources and subresources (`pods`, `pods/resize`, …): GET /api/v1. */
async function coreResourceNames(requester: Requester): Promise<Set<string>> {
  const list = (await objectAnswer(
    requester,
    { verb: 'get', resource: 'discovery' },
    { method: 'GET', path: '/api/v1' },
  )) as ApiResourceList;
  return new Set((list.resources ?? []).map((r) => r.name).filter((n): n is string => typeof n === 'string'));
}

/** Whether the server serves `pods/resize`, the only way to change a running pod's resources. */
export async function servesPodResize(requester: Requester): Promise<boolean> {
  return (await coreResourceNames(requester)).has('pods/resize');
}
