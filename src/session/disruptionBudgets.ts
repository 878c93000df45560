// Follows the PodDisruptionBudgets of a plan's namespaces for `kwave run` (one list and one watch
// of PDBs per namespace) and, when there are any, every pod of those namespaces (a PDB counts all
// the pods it selects, not only the plan's; one more list and watch of pods). Reading PDBs is
// optional: where it is forbidden, kwave says so and goes on without them.
import { isForbidden, KubeError, kubeErrorToKwave, PodCache, type Cluster } from '../cluster/index.js';
import { PdbCache } from '../cluster/pdbCache.js';
import type { Plan } from '../plan/types.js';
import type { DisruptionBudgetView } from '../rollout/runnerDeps.js';

export interface FollowedBudgets {
  view: DisruptionBudgetView;
  close(): void;
}

/**
 * Undefined when the plan does not respect PDBs or they may not be listed. `selectedPods` is
 * the plan's own pod cache: with no PDB at the start it stands in for every pod (a PDB created
 * later then sees only the plan's pods as healthy, which errs on the side of waiting).
 */
export async function followDisruptionBudgets(
  cluster: Cluster,
  plan: Plan,
  selectedPods: PodCache,
  warn: (line: string) => void,
): Promise<FollowedBudgets | undefined> {
  if (!plan.strategy.respectPodDisruptionBudgets) return undefined;
  const pdbs = new PdbCache(cluster, { namespaces: plan.target.namespaces });
  try {
    await pdbs.synced;
  } catch (err) {
    pdbs.close();
    if (isForbidden(err)) {
      warn(
        'listing PodDisruptionBudgets is forbidden: they are not respected (grant poddisruptionbudgets list/watch, see deploy/rbac.yaml)',
      );
      return undefined;
    }
    throw err instanceof KubeError ? kubeErrorToKwave(err, 'listing the PodDisruptionBudgets') : err;
  }
  const selectsAll =
    Object.keys(plan.target.selector.matchLabels ?? {}).length === 0 &&
    (plan.target.selector.matchExpressions ?? []).length === 0;
  let allPods = selectedPods;
  if (pdbs.list().length > 0 && !selectsAll) {
    allPods = new PodCache(cluster, { namespaces: plan.target.namespaces });
    try {
      await allPods.synced;
    } catch (err) {
      allPods.close();
      pdbs.close();
      throw err instanceof KubeError ? kubeErrorToKwave(err, 'listing the pods the PodDisruptionBudgets select') : err;
    }
  }
  const pods = allPods;
  return {
    view: {
      pdbs: () => pdbs.list(),
      pods: () => pods.list(),
      onChange: (listener) => {
        const offPdbs = pdbs.onChange(listener);
        const offPods = pods === selectedPods ? () => undefined : pods.onChange(() => listener());
        return () => {
          offPdbs();
          offPods();
        };
      },
    },
    close: () => {
      pdbs.close();
      if (pods !== selectedPods) pods.close();
    },
  };
}
