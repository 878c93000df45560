// `kwave pause PLAN`, `kwave resume PLAN`, `kwave abort PLAN`: remote control of a rollout, from
// any machine that can reach the cluster (as `kubectl argo rollouts pause/promote/abort`). Each
// writes a request into the `control.json` key of the plan's decisions ConfigMap
// (`kwave-<plan>.control` in its `controlNamespace`) with a resourceVersion-guarded update, never
// taking the run's lease; the runner, wherever it runs, watches that ConfigMap (it may only read
// it) and acts (record/control.ts says how). Who asked — the API server's name for the caller (a
// SelfSubjectReview, asked before writing) and the local `user@host` — and when are kept in the
// key's history, which `kwave status` shows. A multi-cluster plan's request goes to every cluster of the plan, or to
// the one `--cluster NAME` names (each cluster's runner follows its own record); each cluster
// answers on its own line. Exit 0 (also when nothing changed: already paused, not paused), 2 when
// the plan was never run there or, for abort, when no runner holds the lease — in any cluster
// asked (the others are still asked).
import { loadPlanOrReport } from '../loadPlan.js';
import { chooseClusters, planIn, type ChosenCluster } from '../clusterChoice.js';
import { renderError } from '../render.js';
import type { Plan } from '../../plan/types.js';
import { connectFor } from '../../session/connection.js';
import type { Cluster } from '../../cluster/cluster.js';
import { isForbidden, wrapKube } from '../../cluster/kubeError.js';
import { controlName } from '../../record/record.js';
import { ExitCode, KwaveError } from '../../errors.js';
import type { ControlAction } from '../../record/control.js';
import { askControl, whoIsAsking } from '../../session/requests.js';
import type { CommandContext } from '../context.js';
import { notRun, recordNamespace } from './status.js';

/**
 * Writes a decision; a refusal (403) leaves with the API server's own words (who it saw, what it
 * refused) and what grants the decision: the runner's identity is refused there by design.
 */
export async function writingDecision<T>(plan: Plan, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!isForbidden(err)) throw err;
    throw new KwaveError(
      'KUBE',
      `HTTP 403 ${err.message} — people's decisions go to ${plan.controlNamespace}/${controlName(plan.name)}; the Role kwave-approver (deploy/approver.yaml) grants them, never the runner's own identity`,
      ExitCode.BAD_INPUT,
    );
  }
}

export function runFor(action: ControlAction) {
  return async (ctx: CommandContext, args: string[], opts: Record<string, unknown> = {}): Promise<number> => {
    const plan = await loadPlanOrReport(ctx, args[0]!);
    if (!plan) return ExitCode.BAD_INPUT;
    const targets = chooseClusters(plan, { cluster: opts.cluster, context: ctx.common.context });
    // A plan of one cluster: its error is the command's, as for any one-cluster command.
    if (targets.length === 1 && targets[0]!.name === undefined) return requestIn(ctx, plan, action, targets[0]!);
    let exitCode: number = ExitCode.OK;
    for (const target of targets) {
      try {
        await requestIn(ctx, plan, action, target);
      } catch (err) {
        if (!(err instanceof KwaveError)) throw err;
        ctx.io.stderr.write(
          renderError(
            new KwaveError(
              err.code,
              `cluster ${target.name} (context ${target.context}): ${err.message}`,
              err.exitCode,
            ),
          ) + '\n',
        );
        exitCode = Math.max(exitCode, err.exitCode);
      }
    }
    return exitCode;
  };
}

/** One cluster's request: written into its record, answered on stdout; a refusal throws. */
async function requestIn(
  ctx: CommandContext,
  plan: Plan,
  action: ControlAction,
  target: ChosenCluster,
): Promise<number> {
  const cluster = connectFor({ ...ctx.common, context: target.context }, ctx.io.env, plan);
  const what = planIn(plan.name, target.name);
  try {
    return await wrapKube(
      () => writeRequest(ctx, plan, action, cluster, what, target),
      `recording ${action} of ${what}`,
    );
  } finally {
    cluster.close();
  }
}

/** The request written and answered; KubeErrors leave as they came (requestIn wraps them). */
async function writeRequest(
  ctx: CommandContext,
  plan: Plan,
  action: ControlAction,
  cluster: Cluster,
  what: string,
  target: ChosenCluster,
): Promise<number> {
  const asker = await whoIsAsking(cluster, ctx.io.env);
  const { by, user } = asker;
  const outcome = await writingDecision(plan, () =>
    askControl(cluster, {
      namespace: recordNamespace(plan),
      controlNamespace: plan.controlNamespace,
      plan: plan.name,
      revision: plan.revision,
      action,
      asker,
    }),
  );
  if (outcome.kind === 'not-run') throw notRun(plan);
  const { decision, request, runner } = outcome;
  if (!decision.ok) throw new KwaveError('REFUSED', `${action} ${what}: ${decision.message}`, ExitCode.BAD_INPUT);
  if (ctx.common.output === 'json') {
    ctx.io.stdout.write(
      JSON.stringify({
        plan: plan.name,
        ...(target.name === undefined ? {} : { cluster: target.name }),
        action,
        changed: decision.changed,
        by,
        user: user ?? null,
        at: request.at,
        revision: plan.revision,
        runner: runner ?? null,
        message: decision.message,
      }) + '\n',
    );
  } else {
    ctx.io.stdout.write(`${what}: ${decision.message}${decision.changed ? ` (by ${by})` : ''}\n`);
  }
  return ExitCode.OK;
}
