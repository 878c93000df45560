// How kwave asks for pods: list pages, one pod's GET and patches (answered with the pod an
// observer already holds at that version, when one does), create, delete and watch.
import { PatchStrategy, type V1Pod } from '@kubernetes/client-node';
import type { PodObserver } from './clusterOptions.js';
import { checkedPod, decodePod, podShapeProblem, watchEvent } from './decode.js';
import { KubeError } from './kubeError.js';
import { listPage } from './answers.js';
import { continueTokenAhead, type FetchPage } from './pagedList.js';
import { podPath, podsPath } from './paths.js';
import type { CountedRequest, Requester } from './requester.js';
import type { ListPodsOptions, PodWatchEvent, WatchHandle, WatchPodsQuery } from './requestShapes.js';
import type { WireRequest } from './wireRequest.js';

/** How a pod list's pages are asked for (wire JSON) and decoded (refused if an item cannot be a pod). */
export function podPages(
  requester: Requester,
  namespace: string,
  options: ListPodsOptions,
  view: (raw: unknown) => V1Pod = decodePod,
) {
  const limit = options.limit ?? 500;
  const fetchPage: FetchPage<unknown> = async (token, early) => {
    const answer = await requester.wire(
      { verb: 'list', resource: 'pods', namespace },
      {
        method: 'GET',
        path: podsPath(namespace),
        query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, limit, continue: token },
        onHead: (head) => {
          const next = continueTokenAhead(head);
          if (next !== undefined) early(next);
        },
      },
    );
    return listPage(answer, `list pods in ${namespace}`);
  };
  const decode = (items: unknown[]): V1Pod[] =>
    items.map((item, i) => {
      const problem = podShapeProblem(item);
      if (problem) throw new KubeError(500, 'BadResponse', `list pods in ${namespace}: item ${i}: ${problem}`);
      return view(item);
    });
  return { fetchPage, decode };
}

export async function createPod(requester: Requester, namespace: string, body: object): Promise<V1Pod> {
  return checkedPod(
    await requester.wire(
      { verb: 'create', resource: 'pods', namespace },
      { method: 'POST', path: podsPath(namespace), body },
    ),
  );
}

export async function deletePod(requester: Requester, namespace: string, name: string): Promise<void> {
  await requester.wire(
    { verb: 'delete', resource: 'pods', namespace },
    {
      method: 'DELETE',
      path: podPath(namespace, name),
      body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 },
    },
  );
}

export function getPod(
  requester: Requester,
  observers: Iterable<PodObserver>,
  namespace: string,
  name: string,
): Promise<V1Pod> {
  return podAnswer(requester, observers, { verb: 'get', resource: 'pods', namespace }, name, {
    method: 'GET',
    path: podPath(namespace, name),
  });
}

/**
 * A strategic-merge patch of a pod (`subresource` undefined), of its status, or of its resources
 * (`resize`: the containers' CPU and memory, Kubernetes 1.33+).
 */
function strategicPatch(
  subresource: 'status' | 'resize' | undefined,
  requester: Requester,
  observers: Iterable<PodObserver>,
  namespace: string,
  name: string,
  body: object,
): Promise<V1Pod> {
  const resource = subresource ? (`pods/${subresource}` as const) : 'pods';
  return podAnswer(requester, observers, { verb: 'patch', resource, namespace }, name, {
    method: 'PATCH',
    path: subresource ? `${podPath(namespace, name)}/${subresource}` : podPath(namespace, name),
    body,
    contentType: PatchStrategy.StrategicMergePatch,
  });
}

export const patchPod = strategicPatch.bind(undefined, undefined);
export const patchPodStatus = strategicPatch.bind(undefined, 'status');
export const resizePod = strategicPatch.bind(undefined, 'resize');

export function watchPods(
  requester: Requester,
  namespace: string,
  query: WatchPodsQuery,
  onEvent: (event: PodWatchEvent) => void,
  onDone: (err: KubeError | undefined) => void,
): Promise<WatchHandle> {
  return requester.watch(
    { verb: 'watch', resource: 'pods', namespace },
    podsPath(namespace),
    query,
    (type, object) => {
      const e = watchEvent(type, object, checkedPod);
      if (e) onEvent('object' in e ? { type: e.type, pod: e.object } : e);
    },
    onDone,
  );
}

/**
 * A request answered with one pod: the pod an observer holds at the answer's version (or
 * later), else the answer checked (our flow reads it unguarded), decoded and shown to the observers.
 */
async function podAnswer(
  requester: Requester,
  observers: Iterable<PodObserver>,
  target: CountedRequest & { namespace: string },
  name: string,
  req: WireRequest,
): Promise<V1Pod> {
  let held: V1Pod | undefined;
  const reuse = (rv: string): V1Pod | undefined => {
    for (const o of observers) {
      held = o.held(target.namespace, name, rv);
      if (held) return held;
    }
    return undefined;
  };
  const raw = await requester.wire(target, { ...req, reuse });
  if (held !== undefined && raw === held) return held;
  const pod = checkedPod(raw);
  for (const o of observers) o.observe(pod);
  return pod;
}
