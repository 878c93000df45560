// The pods of a `kwave plan` report: one row per pod, the pods whose node cannot act now, and the
// pods that would stand in for them in their waves (rollout/waveFill.ts). Pure.
import type { V1Node } from '@kubernetes/client-node';
import { podChanges } from '../inplace/changes.js';
import { podKey } from '../inplace/podView.js';
import { formatResources } from '../inplace/resources.js';
import type { ContainerUpdate } from '../plan/types.js';
import { nodeHealth, nodeWaitMessage } from '../rollout/nodeHealth.js';
import type { SelectedPod } from '../rollout/select.js';
import { standIns } from '../rollout/waveFill.js';
import type { WavePartition } from '../rollout/waves.js';

export interface PodRow {
  namespace: string;
  name: string;
  node?: string;
  zone?: string;
  /** Left mid-flow by an earlier run of this revision: the run continues it first. */
  resuming?: boolean;
  /** The containers the plan resizes: resources now and after, and whether the kubelet restarts the container (its resizePolicy). */
  resizes?: ResizeRow[];
}

interface ResizeRow {
  container: string;
  from: string;
  to: string;
  restarts: boolean;
}

/** The resizes a pod's row shows (none when the plan resizes nothing, or the pod is already there). */
function resizeRows(p: SelectedPod, containers: readonly ContainerUpdate[]): ResizeRow[] {
  return podChanges(p.pod, containers).resizes.map((r) => ({
    container: r.name,
    from: formatResources(r.from),
    to: formatResources(r.to),
    restarts: r.restarts,
  }));
}

/** A pod as the report lists it. */
export function row(
  p: SelectedPod,
  resuming: ReadonlySet<string>,
  containers: readonly ContainerUpdate[] = [],
): PodRow {
  const key = podKey(p);
  const resizes = resizeRows(p, containers);
  return {
    namespace: p.namespace,
    name: p.name,
    ...(p.node ? { node: p.node } : {}),
    ...(p.zone ? { zone: p.zone } : {}),
    ...(resuming.has(key) ? { resuming: true } : {}),
    ...(resizes.length > 0 ? { resizes } : {}),
  };
}

/**
 * Pods of the waves whose node cannot act, with why (`node sim-node-2 is NotReady since 12s`).
 * `nodes` undefined: the nodes could not be read, so none is judged.
 */
export function nodeWaits(
  pods: readonly SelectedPod[],
  nodes: ReadonlyMap<string, V1Node> | undefined,
  nowMs: number,
  resuming: ReadonlySet<string>,
): (PodRow & { waiting: string })[] {
  if (!nodes) return [];
  return pods.flatMap((p) => {
    if (!p.node || !cannotAct(p, nodes)) return [];
    const node = nodes.get(p.node);
    const health = nodeHealth(node ? { node } : undefined);
    const waiting = health.canAct ? `node ${p.node} does not exist` : nodeWaitMessage(p.node, health, nowMs);
    return [{ ...row(p, resuming), waiting }];
  });
}

/** Whether `p`'s node cannot act now, as listed (a node missing from the list cannot either). */
function cannotAct(p: SelectedPod, nodes: ReadonlyMap<string, V1Node>): boolean {
  if (!p.node) return false;
  const node = nodes.get(p.node);
  return !node || !nodeHealth({ node }).canAct;
}

/**
 * Per wave, the pods from later in the order that `kwave run` would upgrade in it instead of its
 * pods whose node cannot act now (`standingInFor`); waves with no stand-in are left out.
 */
export function standInRows(
  partition: WavePartition<SelectedPod>,
  nodes: ReadonlyMap<string, V1Node> | undefined,
  resuming: ReadonlySet<string>,
): Map<number, { standIns: PodRow[]; standingInFor: PodRow[] }> {
  const out = new Map<number, { standIns: PodRow[]; standingInFor: PodRow[] }>();
  if (!nodes) return out;
  const waits = (p: SelectedPod) => cannotAct(p, nodes);
  for (const s of standIns(partition, waits)) {
    if (s.standIns.length === 0) continue;
    const own = partition.waves.find((w) => w.index === s.wave)?.pods ?? [];
    out.set(s.wave, {
      standIns: s.standIns.map((p) => row(p, resuming)),
      standingInFor: own.filter(waits).map((p) => row(p, resuming)),
    });
  }
  return out;
}
