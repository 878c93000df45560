// Whether a pod's node can act on it: a kubelet that no longer reports (Ready not True, or the
// node lifecycle controller's `unreachable` / `not-ready` taints) never restarts a container, so a
// patch sent there can only time out. Pure: the node as the watch last showed it in, a verdict out.
import type { V1Node } from '@kubernetes/client-node';
import { formatAge } from '../durationText.js';

/** Taints the node lifecycle controller puts on a node whose kubelet is silent or not ready. */
const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';
const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

/** What the node cache knows of one node: the object, or that it is gone (and since when). */
export type NodeSighting = { node: V1Node } | { goneSinceMs: number };

export type NodeHealth =
  | { canAct: true }
  | {
      canAct: false;
      /** `NotReady`: Ready not True or a lifecycle taint; `Gone`: the node object was deleted. */
      state: 'NotReady' | 'Gone';
      /** Since when (ms since the epoch), when the node says; undefined if it does not. */
      sinceMs: number | undefined;
      /** What says so, for messages: `Ready=Unknown (NodeStatusUnknown)`, a taint key, `deleted`. */
      evidence: string;
    };

/** A node that cannot act, and why. */
export type NodeDown = { node: string; health: Extract<NodeHealth, { canAct: false }> };

function toMs(t: Date | string | undefined): number | undefined {
  if (t === undefined) return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The verdict on one node. A node never seen (undefined) can act: kwave has no news of it. */
export function nodeHealth(sighting: NodeSighting | undefined): NodeHealth {
  if (sighting === undefined) return { canAct: true };
  if ('goneSinceMs' in sighting)
    return { canAct: false, state: 'Gone', sinceMs: sighting.goneSinceMs, evidence: 'deleted' };
  const { node } = sighting;
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready && ready.status !== 'True') {
    return {
      canAct: false,
      state: 'NotReady',
      sinceMs: toMs(ready.lastTransitionTime as Date | string | undefined),
      evidence: `Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ''}`,
    };
  }
  const taint = node.spec?.taints?.find((t) => t.key === UNREACHABLE_TAINT || t.key === NOT_READY_TAINT);
  if (taint)
    return {
      canAct: false,
      state: 'NotReady',
      sinceMs: toMs(taint.timeAdded as Date | string | undefined),
      evidence: `taint ${taint.key}:${taint.effect}`,
    };
  return { canAct: true };
}

/** `node sim-node-2 is NotReady since 12s`: the per-pod line of status output. */
export function nodeWaitMessage(
  nodeName: string,
  health: Extract<NodeHealth, { canAct: false }>,
  nowMs: number,
): string {
  const since = health.sinceMs === undefined ? '' : ` since ${formatAge(nowMs - health.sinceMs)}`;
  return `node ${nodeName} is ${health.state === 'Gone' ? 'gone' : 'NotReady'}${since}`;
}

/** `node sim-node-2 is NotReady since 2026-12-01T09:00:01Z (Ready=Unknown (NodeStatusUnknown))`: for failures and events. */
export function nodeLostMessage(nodeName: string, health: Extract<NodeHealth, { canAct: false }>): string {
  const since =
    health.sinceMs === undefined ? '' : ` since ${new Date(health.sinceMs).toISOString().replace(/\.\d+Z$/, 'Z')}`;
  return `node ${nodeName} is ${health.state === 'Gone' ? 'gone' : 'NotReady'}${since} (${health.evidence})`;
}
