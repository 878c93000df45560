// What the dashboard's buttons do: approve, pause, resume and abort, each the very write the CLI
// makes (session/requests.ts), with the dashboard's connection, so under the user's own
// credentials. The answer is a message for the page: what happened, or the refusal as the API
// server (or kwave) gave it, `forbidden` and all.
import type { Cluster } from '../cluster/cluster.js';
import { KubeError } from '../cluster/kubeError.js';
import { approveWave, askControl, whoIsAsking } from '../session/requests.js';
import type { RolloutAction, RolloutView } from './viewModel.js';

export interface ActionRequest {
  /** `namespace/plan`, as the view names the rollout. */
  id: string;
  action: RolloutAction;
  /** approve: the wave the page showed waiting (a stale page never approves another one). */
  wave?: number;
}

export interface ActionAnswer {
  ok: boolean;
  /** The HTTP status for the page: 200, 400 (not possible now), 403/409/… (the API server's), 502 (no answer). */
  status: number;
  message: string;
}

export type ActionCluster = Pick<
  Cluster,
  'getConfigMap' | 'createConfigMap' | 'updateConfigMap' | 'getLease' | 'whoAmI'
>;

/** Carries out `request` on the rollout `view` names (undefined: not followed by this dashboard). */
export async function carryOut(
  cluster: ActionCluster,
  env: NodeJS.ProcessEnv,
  request: ActionRequest,
  view: RolloutView | undefined,
): Promise<ActionAnswer> {
  if (!view) return { ok: false, status: 404, message: `no rollout ${request.id} in the namespaces followed` };
  const { namespace, controlNamespace, plan } = view;
  const what = `plan ${plan} in namespace ${namespace}`;
  try {
    const asker = await whoIsAsking(cluster, env);
    if (request.action === 'approve') {
      if (request.wave === undefined || !Number.isInteger(request.wave) || request.wave < 1)
        return { ok: false, status: 400, message: 'approve: the wave to approve is missing' };
      const outcome = await approveWave(cluster, {
        namespace,
        controlNamespace,
        plan,
        wave: request.wave,
        asker,
        revision: view.revision ?? '',
      });
      if (outcome.kind === 'not-run') return { ok: false, status: 404, message: `${what} has no rollout record` };
      if (outcome.kind === 'refused') return { ok: false, status: 409, message: outcome.why };
      return {
        ok: true,
        status: 200,
        message: outcome.already
          ? `wave ${outcome.wave} of ${what} was already approved by ${outcome.approval.by} at ${outcome.approval.at}`
          : `approved wave ${outcome.wave} of ${what} (by ${outcome.approval.by})`,
      };
    }
    const outcome = await askControl(cluster, {
      namespace,
      controlNamespace,
      plan,
      revision: view.revision ?? '',
      action: request.action,
      asker,
    });
    if (outcome.kind === 'not-run') return { ok: false, status: 404, message: `${what} has no rollout record` };
    const { decision } = outcome;
    if (!decision.ok) return { ok: false, status: 409, message: `${request.action} ${what}: ${decision.message}` };
    return {
      ok: true,
      status: 200,
      message: `${what}: ${decision.message}${decision.changed ? ` (by ${asker.by})` : ''}`,
    };
  } catch (err) {
    if (!(err instanceof KubeError)) throw err;
    // The API server's own words: `configmaps "kwave-web" is forbidden: User "bob" cannot patch …`.
    return { ok: false, status: err.code === 0 ? 502 : err.code, message: err.message };
  }
}
