// The nodes, for `kwave run` and `kwave plan`: a run follows them (to defer pods whose node cannot
// act), and both read their zones (for `order: spread-zones`). Nodes are cluster-scoped: listing
// them is forbidden to a namespaced Role, and each of these says what kwave does without them.
import type { V1Node } from '@kubernetes/client-node';
import { KubeError, kubeErrorToKwave, NodeCache, type Cluster } from '../cluster/index.js';
import { isForbidden } from '../cluster/kubeError.js';
import type { Plan } from '../plan/types.js';
import { zonesOf } from '../rollout/select.js';

export type ZoneInfo = { known: true } | { known: false; reason: string };

export interface ZonesRead {
  zones: Map<string, string>;
  info: ZoneInfo;
  /** The nodes by name, when they could be listed. */
  nodes?: Map<string, V1Node>;
}

/** The nodes' zones, or why they are unknown; errors other than forbidden are thrown. */
export async function readZones(
  listNodes: () => Promise<V1Node[]>,
  order: Plan['strategy']['order'],
): Promise<ZonesRead> {
  try {
    const nodes = await listNodes();
    return {
      zones: zonesOf(nodes),
      info: { known: true },
      nodes: new Map(nodes.flatMap((n) => (n.metadata?.name ? [[n.metadata.name, n] as const] : []))),
    };
  } catch (err) {
    if (!isForbidden(err)) throw err;
    const effect = order === 'spread-zones' ? '; order spread-zones sees every pod as zoneless' : '';
    return { zones: new Map(), info: { known: false, reason: `listing nodes is forbidden (${err.message})${effect}` } };
  }
}

/**
 * The node cache: one list and one watch of nodes, to defer pods whose node cannot act. Undefined
 * when nodes may not be listed (a namespaced Role): kwave then takes every node to be able to act.
 */
export async function followNodes(
  cluster: Cluster,
  warn: (line: string) => void,
  where: string,
): Promise<NodeCache | undefined> {
  const nodes = new NodeCache(cluster);
  try {
    await nodes.synced;
    return nodes;
  } catch (err) {
    nodes.close();
    if (isForbidden(err)) {
      warn('listing nodes is forbidden: pods on nodes that cannot act are not told apart (they time out)');
      return undefined;
    }
    throw err instanceof KubeError ? kubeErrorToKwave(err, `listing the nodes${where}`) : err;
  }
}
