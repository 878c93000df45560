// PodDisruptionBudgets, as kwave respects them: an in-place upgrade is not an eviction, so the
// API server's eviction check never sees it; kwave asks the same question itself before it
// drains a pod. Pure: PDBs, pods and the pods in flight in, a verdict out.
//
// The arithmetic is the disruption controller's (Kubernetes facts, described, not copied):
// - a PDB selects pods of its own namespace; a missing selector selects none, an empty one all;
// - healthy = selected pods that are Ready and not being deleted;
// - expected pods: the selected pods for an integer minAvailable; for maxUnavailable and a
//   percentage minAvailable the controller sums the owners' scale, which kwave reads as the
//   larger of the selected pods and the controller's `status.expectedPods` (where maintained):
//   a replica missing right now still counts;
// - percentages round up: maxUnavailable "10%" of 5 pods = 0.5 → 1, minAvailable "50%" of 5 → 3;
// - desiredHealthy = expected − maxUnavailable (at least 0), or minAvailable (scaled).
// kwave then counts every pod it has in flight as disrupted for its whole flight (as the plan's
// own budget does: a pod is about to be, or may again become, not Ready), and lets one more pod
// start only if the healthy pods left over still reach desiredHealthy. The controller's
// `status.disruptionsAllowed` is a second opinion where it is maintained (observedGeneration
// current, expectedPods > 0, no SyncFailed): 0 there holds the pod too, while none of the PDB's
// pods is in flight (with pods in flight, the status lags kwave's own count and says nothing new).
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { isPodReady, podKey } from '../inplace/podView.js';
import type { LabelSelector } from '../plan/types.js';
import { matchesSelector } from './labelSelector.js';
import type { PodProblem, SelectedPod } from './select.js';

/** Why a PDB holds a pod back. */
export interface PdbBlock {
  /** `namespace/name` of the PDB. */
  pdb: string;
  /** e.g. `PodDisruptionBudget web/web-pdb (maxUnavailable 1): 9 of 10 pods healthy, 1 in flight; needs 9 healthy`. */
  message: string;
}

/** `namespace/name` of a PDB. */
const pdbKey = (pdb: V1PodDisruptionBudget): string => `${pdb.metadata?.namespace ?? ''}/${pdb.metadata?.name ?? ''}`;

/** Whether `pdb` selects `pod` (same namespace, selector matches). */
export function pdbSelects(pdb: V1PodDisruptionBudget, pod: V1Pod): boolean {
  const selector = pdb.spec?.selector;
  if (!selector || pod.metadata?.namespace !== pdb.metadata?.namespace) return false;
  return matchesSelector(selector as LabelSelector, pod.metadata?.labels);
}

/** `"25%"` of `total` rounded up, as the controller scales a percentage; a number as it is. */
export function scaledUp(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const percent = Number(value.replace(/%$/, ''));
  return Number.isFinite(percent) ? Math.ceil((percent * total) / 100) : 0;
}

/** The controller's status, when it is current enough to be a second opinion. */
function maintainedStatus(
  pdb: V1PodDisruptionBudget,
): { disruptionsAllowed: number; expectedPods: number } | undefined {
  const s = pdb.status;
  if (!s) return undefined;
  const generation = pdb.metadata?.generation ?? 1;
  const syncFailed = s.conditions?.some((c) => c.type === 'DisruptionAllowed' && c.reason === 'SyncFailed') ?? false;
  if ((s.observedGeneration ?? 0) < generation || !(s.expectedPods > 0) || syncFailed) return undefined;
  return { disruptionsAllowed: s.disruptionsAllowed, expectedPods: s.expectedPods };
}

/** `minAvailable 8` / `maxUnavailable 10%`, as the spec says. */
function describeRule(pdb: V1PodDisruptionBudget): string {
  const spec = pdb.spec ?? {};
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) return `maxUnavailable ${spec.maxUnavailable}`;
  if (spec.minAvailable !== undefined && spec.minAvailable !== null) return `minAvailable ${spec.minAvailable}`;
  return 'no rule';
}

export interface PdbArithmetic {
  /** The PDB's pods (healthy or not). */
  selected: V1Pod[];
  expected: number;
  desiredHealthy: number;
  /** Ready and not being deleted. */
  healthy: V1Pod[];
}

/** What the disruption controller would compute for `pdb` over `pods` (of any namespaces). */
export function pdbArithmetic(pdb: V1PodDisruptionBudget, pods: readonly V1Pod[]): PdbArithmetic {
  const selected = pods.filter((p) => pdbSelects(pdb, p));
  const healthy = selected.filter((p) => !p.metadata?.deletionTimestamp && isPodReady(p));
  const spec = pdb.spec ?? {};
  const fromScale = Math.max(selected.length, maintainedStatus(pdb)?.expectedPods ?? 0);
  let expected = selected.length;
  let desiredHealthy = 0;
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    expected = fromScale;
    desiredHealthy = Math.max(0, expected - scaledUp(spec.maxUnavailable, expected));
  } else if (typeof spec.minAvailable === 'number') {
    desiredHealthy = spec.minAvailable;
  } else if (typeof spec.minAvailable === 'string') {
    expected = fromScale;
    desiredHealthy = scaledUp(spec.minAvailable, expected);
  }
  return { selected, expected, desiredHealthy, healthy };
}

/**
 * Why draining `candidate` now would break one of `pdbs`, or undefined when none would.
 * `inFlight` are kwave's pods in flight (`namespace/name`), counted as disrupted whatever their
 * readiness at this instant. Worked example, maxUnavailable 1 over 10 pods, all Ready:
 * - nothing in flight: 10 healthy − the candidate = 9 ≥ 9 → start;
 * - one in flight: 10 − 1 − the candidate = 8 < 9 → wait, naming the PDB.
 */
export function pdbBlocker(
  candidate: V1Pod,
  pdbs: readonly V1PodDisruptionBudget[],
  pods: readonly V1Pod[],
  inFlight: ReadonlySet<string>,
): PdbBlock | undefined {
  const key = podKey(candidate);
  // A pod already not healthy (left drained, crashing) takes nothing more from any PDB.
  if (candidate.metadata?.deletionTimestamp || !isPodReady(candidate)) return undefined;
  for (const pdb of pdbs) {
    if (!pdbSelects(pdb, candidate)) continue;
    const a = pdbArithmetic(pdb, pods);
    const flying = a.selected.filter((p) => inFlight.has(podKey(p)) && podKey(p) !== key).length;
    const left = a.healthy.filter((p) => !inFlight.has(podKey(p)) && podKey(p) !== key).length;
    const name = pdbKey(pdb);
    const head = `PodDisruptionBudget ${name} (${describeRule(pdb)})`;
    if (left < a.desiredHealthy) {
      const flight = flying > 0 ? `, ${flying} in flight` : '';
      return {
        pdb: name,
        message: `${head}: ${a.healthy.length} of ${a.selected.length} pods healthy${flight}; draining ${candidate.metadata?.name ?? key} would leave ${left}, it needs ${a.desiredHealthy}`,
      };
    }
    const status = maintainedStatus(pdb);
    if (status && flying === 0 && status.disruptionsAllowed < 1) {
      return { pdb: name, message: `${head}: its status allows no disruption now (status.disruptionsAllowed 0)` };
    }
  }
  return undefined;
}

export type PdbStall =
  /** The PDB can never allow a disruption, whatever the pods' readiness: the plan would wait forever. */
  | { kind: 'never'; pdb: string; pods: number; message: string }
  /** It allows none right now (not enough healthy pods): the plan's pods wait until it does. */
  | { kind: 'now'; pdb: string; pods: number; message: string };

/**
 * PDBs that would make a plan stall, for `kwave plan` and the run's refusal: each PDB selecting
 * some of `todo` (the pods the plan still has to upgrade) that never allows a disruption (e.g.
 * `minAvailable: 100%`, `maxUnavailable: 0`), or allows none now.
 */
export function pdbStalls(
  todo: readonly V1Pod[],
  pdbs: readonly V1PodDisruptionBudget[],
  pods: readonly V1Pod[],
): PdbStall[] {
  const out: PdbStall[] = [];
  for (const pdb of pdbs) {
    const mine = todo.filter((p) => pdbSelects(pdb, p)).length;
    if (mine === 0) continue;
    const a = pdbArithmetic(pdb, pods);
    const name = pdbKey(pdb);
    const head = `PodDisruptionBudget ${name} (${describeRule(pdb)}) selects ${mine} pod${mine === 1 ? '' : 's'} of the plan`;
    if (a.desiredHealthy >= a.expected) {
      out.push({
        kind: 'never',
        pdb: name,
        pods: mine,
        message: `${head} and never allows one to be drained (${a.expected} pods expected, ${a.desiredHealthy} must stay healthy): the rollout would wait forever; change the PDB, or set strategy.respectPodDisruptionBudgets: false`,
      });
    } else if (a.healthy.length - a.desiredHealthy < 1) {
      out.push({
        kind: 'now',
        pdb: name,
        pods: mine,
        message: `${head} and allows no disruption now (${a.healthy.length} of ${a.selected.length} pods healthy, ${a.desiredHealthy} must stay healthy): its pods wait until more are Ready`,
      });
    }
  }
  return out;
}

/** The stalls as problems of the selection: a PDB that never allows a disruption refuses the run. */
export function pdbProblems(
  todo: readonly SelectedPod[],
  pdbs: readonly V1PodDisruptionBudget[],
  pods: readonly V1Pod[],
): PodProblem[] {
  return pdbStalls(
    todo.map((s) => s.pod),
    pdbs,
    pods,
  ).map((s) =>
    s.kind === 'never'
      ? { kind: 'pdb-never', severity: 'error', message: s.message }
      : { kind: 'pdb-blocked', severity: 'warning', message: s.message },
  );
}
