// How kwave asks for PodDisruptionBudgets (policy/v1) of a namespace: the list and a watch of
// their changes, for the PDB cache.
import { listPage } from './answers.js';
import { decodePdb, watchEvent } from './decode.js';
import type { KubeError } from './kubeError.js';
import { pdbsPath } from './paths.js';
import type { Requester } from './requester.js';
import type { PdbList, PdbWatchEvent, WatchHandle, WatchNodesQuery } from './requestShapes.js';

export async function listPdbs(requester: Requester, namespace: string): Promise<PdbList> {
  const page = listPage(
    await requester.wire(
      { verb: 'list', resource: 'poddisruptionbudgets', namespace },
      { method: 'GET', path: pdbsPath(namespace) },
    ),
    `list poddisruptionbudgets in ${namespace}`,
  );
  return { items: page.items.map(decodePdb), resourceVersion: page.resourceVersion ?? '' };
}

export function watchPdbs(
  requester: Requester,
  namespace: string,
  query: WatchNodesQuery,
  onEvent: (event: PdbWatchEvent) => void,
  onDone: (err: KubeError | undefined) => void,
): Promise<WatchHandle> {
  return requester.watch(
    { verb: 'watch', resource: 'poddisruptionbudgets', namespace },
    pdbsPath(namespace),
    query,
    (type, object) => {
      const e = watchEvent(type, object, decodePdb);
      if (e) onEvent('object' in e ? { type: e.type, pdb: e.object } : e);
    },
    onDone,
  );
}
