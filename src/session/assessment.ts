// One assessment of a selection, for `kwave plan` and `kwave run` alike: the selection's own
// problems, then what the PodDisruptionBudgets and the pods' owners add, and whether the run is
// refused. Pure: each command reads the cluster its own way (plan lists page by page, run follows
// by watch) and hands over what it read; the two cannot disagree about what refuses a run.
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { pdbProblems } from '../rollout/disruptionBudget.js';
import { ownerProblems, type OwnerEntry } from '../rollout/owners.js';
import type { ForcedRollback } from '../rollout/runner.js';
import type { FleetSelection, PodProblem } from '../rollout/select.js';

/** What was read of the cluster beside the selected pods. */
export interface SelectionFindings {
  /** Problems met while reading (PDBs that may not be listed); they come before the rest. */
  readProblems?: readonly PodProblem[];
  /** The PDBs of the target namespaces and every pod they count; undefined: PDBs are not checked. */
  budgets?: { pdbs: readonly V1PodDisruptionBudget[]; pods: readonly V1Pod[] };
  /** The selected pods' owners (spec.owners). */
  owners: readonly OwnerEntry[];
  /** With owners: update, the owners these credentials may not patch (the dry-run PATCH's refusals). */
  ownerPatchRefusals: readonly string[];
}

/**
 * Adds the PDBs' and the owners' problems to the selection's (in that order) and says whether
 * the run is refused; `force` (`kwave run --force`) lets pods another revision left mid-flight go.
 */
export function assessSelection(
  selection: FleetSelection,
  found: SelectionFindings,
  force = false,
): { refusal: string | undefined } {
  selection.problems.push(...(found.readProblems ?? []));
  if (found.budgets) selection.problems.push(...pdbProblems(selection.todo, found.budgets.pdbs, found.budgets.pods));
  selection.problems.push(...ownerProblems(found.owners));
  for (const message of found.ownerPatchRefusals)
    selection.problems.push({ kind: 'owner', severity: 'error', message });
  return { refusal: refusalOf(selection.problems, force) };
}

/** The problems that refuse a run: every error, but with `force` not the pods of another revision. */
export function refusingProblems(problems: readonly PodProblem[], force = false): PodProblem[] {
  return problems.filter((p) => p.severity === 'error' && !(force && p.kind === 'other-revision'));
}

/** Why the run must not start (`refusing to run:` and the first ten); undefined if it may. */
function refusalOf(problems: readonly PodProblem[], force: boolean): string | undefined {
  const errors = refusingProblems(problems, force);
  if (errors.length === 0) return undefined;
  const shown = errors.slice(0, 10).map((p) => `  - ${p.message}`);
  if (errors.length > 10) shown.push(`  … and ${errors.length - 10} more (kwave plan lists them all)`);
  return `refusing to run:\n${shown.join('\n')}`;
}

/** `--force`: the pods another revision of this plan left mid-flight, for the runner to roll back first. */
export function forcedRollbacks(selection: FleetSelection): ForcedRollback[] {
  return selection.problems.flatMap((p) => {
    if (p.kind !== 'other-revision' || !p.pod || !p.revision) return [];
    const [namespace, name] = p.pod.split('/') as [string, string];
    return [{ namespace, name, revision: p.revision }];
  });
}
