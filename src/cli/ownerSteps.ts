// Where `spec.owners` enters a run (rolloutSession.ts): before it, each selected pod's owner is
// read and shown, and what would refuse the run becomes a problem of the selection; after it,
// OnDelete owners' templates follow the pods (upgrade) or go back (rollback).
import type { V1Pod } from '@kubernetes/client-node';
import type { Cluster } from '../cluster/index.js';
import { ExitCode } from '../errors.js';
import type { Plan } from '../plan/types.js';
import { OWNER_STATE_ANNOTATION, ownerProblems, type OwnerEntry } from '../rollout/owners.js';
import type { FleetSelection, PodProblem } from '../rollout/select.js';
import {
  applyOwnerUpdates,
  clusterWorkloadReader,
  discoverOwners,
  revertOwners,
  updatePermissionProblems,
  type OwnerStepResult,
} from './owners.js';

/** The owners of the pods a run touches, the problems they add, each entry told through `say`. */
export async function ownersOf(
  cluster: Cluster,
  plan: Plan,
  selection: FleetSelection | undefined,
  cached: readonly V1Pod[],
  say: (line: string) => void,
  /** Workload resources whose `get` the permission preflight found missing: not asked for. */
  unreadable: ReadonlySet<string> = new Set(),
): Promise<{ entries: OwnerEntry[]; problems: PodProblem[] }> {
  const pods = selection
    ? selection.selected
    : cached.map((pod) => ({ namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', pod }));
  const entries = await discoverOwners(clusterWorkloadReader(cluster), plan, pods, unreadable);
  // A rollback reverts what it finds; refusing it for an owner's kind would help nobody.
  if (!selection) return { entries, problems: [] };
  const problems = ownerProblems(entries);
  for (const message of await updatePermissionProblems(cluster, entries))
    problems.push({ kind: 'owner', severity: 'error', message });
  for (const e of entries) if (e.action === 'update' || e.action === 'in-step') say(`owner ${e.message}`);
  for (const p of problems) if (p.severity === 'warning') say(`warning: ${p.message}`);
  return { entries, problems };
}

/** After the run: owners' templates set (an upgrade that ended 0 or 5) or put back (a rollback). */
export async function keepOwnersInStep(
  cluster: Cluster,
  plan: Plan,
  direction: 'upgrade' | 'rollback',
  entries: readonly OwnerEntry[],
  exitCode: number,
  current: (key: string) => V1Pod | undefined,
): Promise<OwnerStepResult> {
  if (direction === 'rollback') {
    // Only once the pods are back: a template reverted under pods still at the new image would bring replacements back on the old one.
    if (exitCode === ExitCode.OK) return revertOwners(cluster, entries, plan);
    const kept = entries.filter((e) => e.workload && e.workload.annotations[OWNER_STATE_ANNOTATION] !== undefined);
    return {
      lines: kept.map(
        (e) =>
          `owner ${e.kind} ${e.namespace}/${e.name}: template left at the new images: the rollback did not complete`,
      ),
      failed: 0,
      forbidden: false,
    };
  }
  if (exitCode !== ExitCode.OK && exitCode !== ExitCode.NODES_DOWN) {
    const held = entries.filter((e) => e.action === 'update');
    return {
      lines: held.map(
        (e) => `owner ${e.kind} ${e.namespace}/${e.name}: template left as it was: the rollout did not complete`,
      ),
      failed: 0,
      forbidden: false,
    };
  }
  return applyOwnerUpdates(cluster, entries, current, plan);
}
