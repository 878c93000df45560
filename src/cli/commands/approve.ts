// `kwave approve PLAN [--wave N]`: records the approval of a wave's approval gate as the key
// `approval.wave-N` = {"by", "user", "at", "revision"} of the plan's decisions ConfigMap
// (`kwave-<plan>.control` in its `controlNamespace`, created on the first decision), which the
// runner only reads: where RBAC lets the runner's identity read it and nothing more, the runner
// cannot approve its own rollout. `user` is the API server's name for the approver
// (SelfSubjectReview, asked before writing). The write is session/requests.ts approveWave, the
// same `kwave dashboard` makes. Without --wave it approves the wave the rollout is waiting on;
// exit 2 when none waits, or when the plan was never run. A multi-cluster plan: the cluster
// `--cluster NAME` names, else the one waiting; `--wave N` with none waiting on it approves wave N
// ahead of time in every cluster.
import { loadPlanOrReport } from '../loadPlan.js';
import { chooseClusters } from '../clusterChoice.js';
import { connectFor } from '../../session/connection.js';
import { approveWave, whoIsAsking } from '../../session/requests.js';
import { wrapKube } from '../../cluster/kubeError.js';
import { ExitCode, KwaveError } from '../../errors.js';
import { controlName, type Approval } from '../../record/record.js';
import { decodeRecord } from '../../record/codec.js';
import { writingDecision } from './control.js';
import type { CommandContext } from '../context.js';
import type { Plan } from '../../plan/types.js';
import { notRun, readRecordConfigMap, recordNamespace } from './status.js';

function waveFlag(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new KwaveError('USAGE', `--wave: expected a wave number (1 or more), found "${String(value)}"`);
  return n;
}

export async function run(ctx: CommandContext, args: string[], opts: Record<string, unknown>): Promise<number> {
  const asked = waveFlag(opts.wave);
  const plan = await loadPlanOrReport(ctx, args[0]!);
  if (!plan) return ExitCode.BAD_INPUT;
  const chosen = chooseClusters(plan, { cluster: opts.cluster, context: ctx.common.context });
  if (!plan.clusters || opts.cluster !== undefined)
    return approveIn(ctx, plan, asked, chosen[0]!.context, chosen[0]!.name);
  // Steps run one at a time: at most one cluster waits for an approval.
  for (const c of chosen) {
    const cluster = connectFor({ ...ctx.common, context: c.context }, ctx.io.env, plan);
    try {
      const cm = await readRecordConfigMap(cluster, plan);
      const decoded = cm && decodeRecord(cm);
      if (
        decoded?.ok &&
        decoded.record.waiting?.kind === 'approval' &&
        (asked === undefined || decoded.record.waiting.wave === asked)
      )
        return approveIn(ctx, plan, asked, c.context, c.name);
    } finally {
      cluster.close();
    }
  }
  if (asked === undefined)
    throw new KwaveError(
      'REFUSED',
      `no cluster of plan ${plan.name} is waiting for approval; pass --wave N to approve a wave ahead of time (in every cluster, or the one --cluster NAME names)`,
    );
  // Ahead of time: wave N in every cluster of the plan (each cluster's gate is its own).
  for (const c of chosen) await approveIn(ctx, plan, asked, c.context, c.name);
  return ExitCode.OK;
}

async function approveIn(
  ctx: CommandContext,
  plan: Plan,
  asked: number | undefined,
  context: string | undefined,
  clusterName?: string,
): Promise<number> {
  const cluster = connectFor({ ...ctx.common, context }, ctx.io.env, plan);
  try {
    const asker = await whoIsAsking(cluster, ctx.io.env);
    const outcome = await wrapKube(
      () =>
        writingDecision(plan, () =>
          approveWave(cluster, {
            namespace: recordNamespace(plan),
            controlNamespace: plan.controlNamespace,
            plan: plan.name,
            ...(asked === undefined ? {} : { wave: asked }),
            asker,
            revision: plan.revision,
          }),
        ),
      `recording the approval of ${asked === undefined ? 'the waiting wave' : `wave ${asked}`} of plan ${plan.name} in ${plan.controlNamespace}/${controlName(plan.name)}`,
    );
    if (outcome.kind === 'not-run') throw notRun(plan);
    if (outcome.kind === 'refused') throw new KwaveError('REFUSED', outcome.why);
    report(ctx, plan.name, outcome.wave, outcome.approval, outcome.already, clusterName);
    return ExitCode.OK;
  } finally {
    cluster.close();
  }
}

function report(
  ctx: CommandContext,
  plan: string,
  wave: number,
  approval: Approval,
  already: boolean,
  cluster?: string,
): void {
  const inCluster = cluster === undefined ? '' : ` in cluster ${cluster}`;
  if (ctx.common.output === 'json') {
    ctx.io.stdout.write(
      JSON.stringify({
        plan,
        ...(cluster === undefined ? {} : { cluster }),
        wave,
        by: approval.by,
        user: approval.user ?? null,
        at: approval.at,
        revision: approval.revision,
        alreadyApproved: already,
      }) + '\n',
    );
  } else if (already) {
    ctx.io.stdout.write(
      `wave ${wave} of plan ${plan}${inCluster} was already approved by ${approval.by} at ${approval.at}\n`,
    );
  } else {
    ctx.io.stdout.write(`approved wave ${wave} of plan ${plan}${inCluster} (by ${approval.by})\n`);
  }
}
