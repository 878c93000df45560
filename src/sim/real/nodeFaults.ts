// The admin port's node faults on the real backend answer once they have taken effect in the
// cluster, as on the embedded one: a node made NotReady once the node-lifecycle controller has
// marked its pods not Ready; a node made Ready again once that controller has also lifted its
// `unreachable` / `not-ready` taints. Until then the node is not back for anyone who reads it —
// kwave defers a tainted node's pods — and the controller lifts them only at its next look
// (a few seconds after the kubelet's Ready), so answering earlier made a re-run race it.
import { HttpError } from '../adminServer.js';
import type { NodeAgent } from '../agent/index.js';
import type { KubeHttp } from '../agent/kubeHttp.js';
import { nodeNameOf } from '../kubelet/pods.js';
import { isPodReady } from '../readiness.js';

const NODE_FAULT_TIMEOUT_MS = 120_000;

/** The node lifecycle controller's taints on a node whose kubelet is silent or not ready. */
const LIFECYCLE_TAINTS = new Set(['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready']);

/** Resolves once no pod bound to `node` is Ready (as the agent's watch sees them). */
export function untilNodePodsNotReady(
  agent: NodeAgent,
  node: string,
  timeoutMs = NODE_FAULT_TIMEOUT_MS,
): Promise<void> {
  const anyReady = () => [...agent.pods()].some((p) => nodeNameOf(p) === node && isPodReady(p));
  return new Promise((resolve, reject) => {
    if (!anyReady()) return resolve();
    const timer = setTimeout(() => {
      stop();
      reject(
        new HttpError(
          504,
          `node ${node}: the node-lifecycle controller did not mark its pods not Ready within ${timeoutMs / 1000} s`,
        ),
      );
    }, timeoutMs);
    const stop = agent.subscribe(() => {
      if (anyReady()) return;
      clearTimeout(timer);
      stop();
      resolve();
    });
  });
}

interface NodeObject {
  spec?: { taints?: { key?: string }[] };
  status?: { conditions?: { type?: string; status?: string }[] };
}

/** Ready=True and none of the lifecycle taints. */
function nodeIsBack(node: NodeObject): boolean {
  const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return ready && !(node.spec?.taints ?? []).some((t) => t.key !== undefined && LIFECYCLE_TAINTS.has(t.key));
}

/** Resolves once the Node `node` reads Ready with no lifecycle taint (watched; a cut watch is opened again). */
export async function untilNodeBack(http: KubeHttp, node: string, timeoutMs = NODE_FAULT_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const path = `/api/v1/nodes?watch=true&fieldSelector=${encodeURIComponent(`metadata.name=${node}`)}`;
  while (Date.now() < deadline) {
    let back = false;
    const handle = http.watch(path, (_type, object) => {
      if (!back && nodeIsBack(object as NodeObject)) {
        back = true;
        handle.abort();
      }
    });
    const timer = setTimeout(() => handle.abort(), Math.max(0, deadline - Date.now()));
    try {
      await handle.done.catch(() => undefined); // a failed watch is opened again below, until the deadline
    } finally {
      clearTimeout(timer);
    }
    if (back) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new HttpError(
    504,
    `node ${node}: the node-lifecycle controller did not lift its NotReady taints within ${timeoutMs / 1000} s`,
  );
}
