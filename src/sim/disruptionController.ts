// The embedded backend's disruption controller: keeps every PodDisruptionBudget's status as
// kube-controller-manager's does, so that a client reading `status.disruptionsAllowed` sees on
// the embedded backend what it sees on the real one. The rules (facts from the Kubernetes
// disruption controller, described, not copied):
// - the PDB selects pods of its namespace by its selector (none selected by a missing selector,
//   all by an empty one);
// - healthy = selected pods that are Ready and not being deleted;
// - an integer minAvailable counts the selected pods as expected, desiredHealthy = minAvailable;
// - maxUnavailable and a percentage minAvailable take the expected count from the pods'
//   controllers' scale (pods without a controller are "unmanaged" and count for nothing; a
//   controller that cannot be found fails the sync: disruptionsAllowed 0, condition SyncFailed);
//   percentages are rounded up; desiredHealthy = expected − maxUnavailable (at least 0), or
//   ceil(minAvailable% × expected);
// - disruptionsAllowed = healthy − desiredHealthy, 0 when negative or when nothing is expected;
// - condition DisruptionAllowed: True/SufficientPods when disruptionsAllowed > 0, else
//   False/InsufficientPods; observedGeneration = metadata.generation.
// Status writes go straight to the store, as the controller's writes are not client requests.
import { rfc3339 } from './clock.js';
import { isPodReady } from './readiness.js';
import { matchesLabels, type LabelRequirement } from './apiserver/labelSelector.js';
import type { KubeObject, Store } from './store.js';

interface MetaSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

interface PdbSpec {
  selector?: MetaSelector | null;
  minAvailable?: number | string | null;
  maxUnavailable?: number | string | null;
}

interface PdbCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  observedGeneration: number;
  lastTransitionTime: string;
}

export interface PdbStatus {
  observedGeneration: number;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions: PdbCondition[];
}

/** The scale of a pod's controller (by its controllerRef), or undefined when no such controller exists. */
export type ScaleOf = (ref: { kind: string; name: string; uid: string }, namespace: string) => number | undefined;

/** A metav1.LabelSelector as requirements (undefined: selects nothing). */
function requirements(selector: MetaSelector | null | undefined): LabelRequirement[] | undefined {
  if (!selector) return undefined;
  const reqs: LabelRequirement[] = Object.entries(selector.matchLabels ?? {}).map(([key, v]) => ({
    key,
    op: 'equals',
    values: [v],
  }));
  for (const e of selector.matchExpressions ?? []) {
    const op =
      e.operator === 'In' ? 'in' : e.operator === 'NotIn' ? 'notIn' : e.operator === 'Exists' ? 'exists' : 'notExists';
    reqs.push({ key: e.key, op, values: e.values ?? [] });
  }
  return reqs;
}

/** The pods of its namespace that a PDB selects. */
function podsOfPdb(pdb: KubeObject, pods: readonly KubeObject[]): KubeObject[] {
  const reqs = requirements((pdb.spec as PdbSpec | undefined)?.selector);
  if (!reqs) return [];
  return pods.filter((p) => p.metadata.namespace === pdb.metadata.namespace && matchesLabels(reqs, p.metadata.labels));
}

/** `"25%"` of `total`, rounded up; a number as it is. */
function scaled(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  return Math.ceil((Number(value.slice(0, -1)) * total) / 100);
}

/** Expected pods from the controllers' scale, or the reason the sync fails. */
function expectedScale(pods: readonly KubeObject[], scaleOf: ScaleOf): number | { error: string } {
  const scales = new Map<string, number>();
  for (const pod of pods) {
    const ref = pod.metadata.ownerReferences?.find((o) => o.controller);
    if (!ref) continue; // unmanaged: counts for nothing
    if (scales.has(ref.uid)) continue;
    const scale = scaleOf(ref, pod.metadata.namespace ?? '');
    if (scale === undefined) return { error: `found no controllers for pod "${pod.metadata.name}"` };
    scales.set(ref.uid, scale);
  }
  return [...scales.values()].reduce((a, b) => a + b, 0);
}

function condition(
  previous: readonly PdbCondition[],
  next: Omit<PdbCondition, 'lastTransitionTime'>,
  now: string,
): PdbCondition[] {
  const old = previous.find((c) => c.type === next.type);
  const lastTransitionTime = old && old.status === next.status ? old.lastTransitionTime : now;
  return [...previous.filter((c) => c.type !== next.type), { ...next, lastTransitionTime }];
}

/** The status the disruption controller writes for `pdb` given every pod of its namespace. Pure. */
export function disruptionStatus(pdb: KubeObject, pods: readonly KubeObject[], scaleOf: ScaleOf, now: Date): PdbStatus {
  const spec = (pdb.spec ?? {}) as PdbSpec;
  const old = (pdb.status ?? {}) as Partial<PdbStatus>;
  const generation = typeof pdb.metadata.generation === 'number' ? pdb.metadata.generation : 1;
  const selected = podsOfPdb(pdb, pods);
  const at = rfc3339(now);
  let expected = 0;
  let desired = 0;
  const needsScale = (spec.maxUnavailable ?? null) !== null || typeof spec.minAvailable === 'string';
  if (needsScale) {
    const scale = expectedScale(selected, scaleOf);
    if (typeof scale !== 'number') {
      // The controller's fail-safe: no disruption, the rest of the status as it was.
      return {
        observedGeneration: old.observedGeneration ?? 0,
        disruptionsAllowed: 0,
        currentHealthy: old.currentHealthy ?? 0,
        desiredHealthy: old.desiredHealthy ?? 0,
        expectedPods: old.expectedPods ?? 0,
        conditions: condition(
          old.conditions ?? [],
          {
            type: 'DisruptionAllowed',
            status: 'False',
            reason: 'SyncFailed',
            message: scale.error,
            observedGeneration: old.observedGeneration ?? 0,
          },
          at,
        ),
      };
    }
    expected = scale;
    if ((spec.maxUnavailable ?? null) !== null)
      desired = Math.max(0, expected - scaled(spec.maxUnavailable as number | string, expected));
    else desired = scaled(spec.minAvailable as string, expected);
  } else if (typeof spec.minAvailable === 'number') {
    expected = selected.length;
    desired = spec.minAvailable;
  }
  const healthy = selected.filter((p) => !p.metadata.deletionTimestamp && isPodReady(p)).length;
  const allowed = expected <= 0 ? 0 : Math.max(0, healthy - desired);
  const ok = allowed > 0;
  return {
    observedGeneration: generation,
    disruptionsAllowed: allowed,
    currentHealthy: healthy,
    desiredHealthy: desired,
    expectedPods: expected,
    conditions: condition(
      old.conditions ?? [],
      {
        type: 'DisruptionAllowed',
        status: ok ? 'True' : 'False',
        reason: ok ? 'SufficientPods' : 'InsufficientPods',
        message: '',
        observedGeneration: generation,
      },
      at,
    ),
  };
}

/**
 * Follows the store: a change of a PDB or of a pod marks its namespace, and the namespace's PDBs
 * are synced together on the next turn of the event loop. Returns the stop function.
 */
export function runDisruptionController(
  store: Store,
  scaleOf: ScaleOf = () => undefined,
  now: () => Date = () => new Date(),
): () => void {
  let dirty = new Set<string>();
  let scheduled: NodeJS.Immediate | undefined;
  const sync = () => {
    scheduled = undefined;
    const namespaces = dirty;
    dirty = new Set();
    for (const ns of namespaces) {
      const pdbs = store.list('poddisruptionbudgets', ns);
      if (pdbs.length === 0) continue;
      const pods = store.list('pods', ns);
      for (const pdb of pdbs) {
        const status = disruptionStatus(pdb, pods, scaleOf, now());
        if (JSON.stringify(status) === JSON.stringify(pdb.status)) continue;
        store.update('poddisruptionbudgets', { ...pdb, status });
      }
    }
  };
  const unsubscribe = store.subscribe((change) => {
    if (change.resource !== 'pods' && change.resource !== 'poddisruptionbudgets') return;
    // Its own status writes change nothing it reads.
    if (
      change.resource === 'poddisruptionbudgets' &&
      change.type === 'MODIFIED' &&
      JSON.stringify(change.object.spec) === JSON.stringify(change.previous?.spec) &&
      change.object.metadata.generation === change.previous?.metadata.generation
    )
      return;
    dirty.add(change.object.metadata.namespace ?? '');
    scheduled ??= setImmediate(sync);
  });
  for (const pdb of store.list('poddisruptionbudgets')) dirty.add(pdb.metadata.namespace ?? '');
  if (dirty.size > 0) scheduled = setImmediate(sync);
  return () => {
    unsubscribe();
    if (scheduled) clearImmediate(scheduled);
  };
}
