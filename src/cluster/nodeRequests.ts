// How kwave asks for nodes (cluster-scoped): every node, page by page, and a watch of their
// changes, for the zones and the node cache.
import { listPage } from './answers.js';
import { decodeNode, watchEvent } from './decode.js';
import type { KubeError } from './kubeError.js';
import { listAllPages } from './pagedList.js';
import { NODES_PATH } from './paths.js';
import type { Requester } from './requester.js';
import type { NodeList, NodeWatchEvent, WatchHandle, WatchNodesQuery } from './requestShapes.js';

export async function listNodeList(requester: Requester, limit: number): Promise<NodeList> {
  return listAllPages(
    async (token) =>
      listPage(
        await requester.wire(
          { verb: 'list', resource: 'nodes' },
          { method: 'GET', path: NODES_PATH, query: { limit, continue: token } },
        ),
        'list nodes',
      ),
    (nodes) => nodes.map(decodeNode),
  );
}

export function watchNodes(
  requester: Requester,
  query: WatchNodesQuery,
  onEvent: (event: NodeWatchEvent) => void,
  onDone: (err: KubeError | undefined) => void,
): Promise<WatchHandle> {
  return requester.watch(
    { verb: 'watch', resource: 'nodes' },
    NODES_PATH,
    query,
    (type, object) => {
      const e = watchEvent(type, object, decodeNode);
      if (e) onEvent('object' in e ? { type: e.type, node: e.object } : e);
    },
    onDone,
  );
}
