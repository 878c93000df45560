// How kwave lists and watches a namespace's ConfigMaps, Leases and Events as wire JSON, for views
// that follow every rollout of a namespace (`kwave dashboard`): a list page by page, then a watch
// from its resourceVersion. In the control lane (requester.ts), never behind pod traffic.
import { listPage } from './answers.js';
import { watchEvent } from './decode.js';
import type { KubeError } from './kubeError.js';
import type { ObjectWatchEvent } from './listWatch.js';
import { listAllPages } from './pagedList.js';
import { configMapsPath, eventsPath, leasesPath } from './paths.js';
import type { Requester } from './requester.js';
import type { WatchHandle, WatchPodsQuery } from './requestShapes.js';

/** The collections a namespace view follows. */
export type FollowedResource = 'configmaps' | 'leases' | 'events';

/** Any Kubernetes object, as the wire holds it. */
export interface WireObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

const PATHS: Record<FollowedResource, (namespace: string) => string> = {
  configmaps: configMapsPath,
  leases: leasesPath,
  events: eventsPath,
};

const asObject = (raw: unknown): WireObject => raw as WireObject;

export interface ObjectQuery {
  labelSelector?: string;
  fieldSelector?: string;
}

export async function listObjects(
  requester: Requester,
  resource: FollowedResource,
  namespace: string,
  query: ObjectQuery,
): Promise<{ items: WireObject[]; resourceVersion: string }> {
  return listAllPages(
    async (token) =>
      listPage(
        await requester.wire(
          { verb: 'list', resource, namespace },
          {
            method: 'GET',
            path: PATHS[resource](namespace),
            query: {
              labelSelector: query.labelSelector || undefined,
              fieldSelector: query.fieldSelector || undefined,
              limit: 500,
              continue: token,
            },
          },
          { lane: 'control' },
        ),
        `list ${resource}`,
      ),
    (items) => items.map(asObject),
  );
}

export function watchObjects(
  requester: Requester,
  resource: FollowedResource,
  namespace: string,
  query: WatchPodsQuery,
  onEvent: (event: ObjectWatchEvent<WireObject>) => void,
  onDone: (err: KubeError | undefined) => void,
): Promise<WatchHandle> {
  return requester.watch(
    { verb: 'watch', resource, namespace },
    PATHS[resource](namespace),
    query,
    (type, object) => {
      const e = watchEvent(type, object, asObject);
      if (e) onEvent(e);
    },
    onDone,
    'control',
  );
}
