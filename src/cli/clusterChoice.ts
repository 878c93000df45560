// Which clusters a command about one plan acts on (`kwave pause | resume | abort | status |
// approve`): a plan of one cluster has one, reached through --context (or the current context);
// a multi-cluster plan (spec.clusters) has all of them, or the one `--cluster NAME` names. Pure:
// wrong flags are usage errors (exit 2) that say what would have been right.
import { KwaveError } from '../errors.js';
import type { Plan } from '../plan/types.js';

export interface ChosenCluster {
  /** The plan's name for it; undefined for a plan of one cluster. */
  name: string | undefined;
  /** The kubeconfig context; undefined: the current one. */
  context: string | undefined;
}

/** The clusters of `plan` a command acts on, from `--cluster` and `--context`, in the plan's order. */
export function chooseClusters(
  plan: Pick<Plan, 'name' | 'clusters'>,
  flags: { cluster?: unknown; context?: string | undefined },
): ChosenCluster[] {
  const multi = plan.clusters;
  if (!multi) {
    if (flags.cluster !== undefined)
      throw new KwaveError(
        'USAGE',
        `--cluster: plan ${plan.name} lists no clusters (spec.clusters); use --context to pick the kubeconfig context`,
      );
    return [{ name: undefined, context: flags.context }];
  }
  const names = multi.list.map((c) => c.name);
  if (flags.context !== undefined)
    throw new KwaveError(
      'USAGE',
      `--context: plan ${plan.name} names its clusters' contexts (spec.clusters: ${names.join(', ')}); pass --cluster NAME instead`,
    );
  if (flags.cluster === undefined) return multi.list.map((c) => ({ name: c.name, context: c.context }));
  const asked = String(flags.cluster);
  const chosen = multi.list.find((c) => c.name === asked);
  if (!chosen)
    throw new KwaveError(
      'USAGE',
      `--cluster: plan ${plan.name} has no cluster "${asked}" (its clusters: ${names.join(', ')})`,
    );
  return [{ name: chosen.name, context: chosen.context }];
}

/** `plan web` or `plan web in cluster eu-1`, for a command's lines. */
export function planIn(plan: string, cluster: string | undefined): string {
  return cluster === undefined ? `plan ${plan}` : `plan ${plan} in cluster ${cluster}`;
}
