// `kwave approve PLAN [--wave N]`: records the approval of a wave's approval gate as the key
// `approval.wave-N` = {"by", "user", "at", "revision"} of the plan's decisions ConfigMap
// (`kwave-<plan>.control` in its `controlNamespace`, created on the first decision), which the
// runner only reads: where RBAC lets the runner's identity read it and nothing more, the runner
// cannot approve its own rollout. `user` is the API server's name for the approver
// (SelfSubjectReview, asked before writing). Reads the record (which wave waits) and writes the
// decisions, nothing else. Without --wave it approves the wave the rollout is waiting on; exit 2
// when none waits, or when the plan was never run. A multi-cluster plan: the cluster `--cluster
// NAME` names, else the one waiting; `--wave N` with none waiting on it approves wave N ahead of
// time in every cluster.
import { loadPlanOrReport } from '../loadPlan.js';
import { chooseClusters } from '../clusterChoice.js';
import { connectFor } from '../../session/connection.js';
import { wrapKube } from '../../cluster/kubeError.js';
import { ExitCode, KwaveError } from '../../errors.js';
import { controlName, recordName, type Approval } from '../../record/record.js';
import { approvalKey, decodeApprovals, decodeRecord, encodeApproval } from '../../record/codec.js';
import { updateDecisions } from '../../record/controlStore.js';
import { whoIsAsking, writingDecision } from './control.js';
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
  const namespace = recordNamespace(plan);
  const name = recordName(plan.name);
  const cluster = connectFor({ ...ctx.common, context }, ctx.io.env, plan);
  try {
    const cm = await readRecordConfigMap(cluster, plan);
    if (!cm) throw notRun(plan);
    const decoded = decodeRecord(cm);
    const record = decoded.ok ? decoded.record : undefined;

    let wave = asked;
    if (wave === undefined) {
      if (!record)
        throw new KwaveError(
          'REFUSED',
          `cannot tell which wave waits: the rollout record ${namespace}/${name} is damaged (${decoded.ok ? '' : decoded.problem}); pass --wave N`,
        );
      if (record.waiting?.kind !== 'approval') {
        const where = record.wave === 0 ? 'before its first wave' : `wave ${record.wave} of ${record.waves}`;
        throw new KwaveError(
          'REFUSED',
          `no wave of plan ${plan.name} is waiting for approval (phase ${record.phase}, ${where}); pass --wave N to approve a wave ahead of time`,
        );
      }
      wave = record.waiting.wave;
    } else if (record && record.waves > 0 && wave > record.waves) {
      throw new KwaveError(
        'REFUSED',
        `plan ${plan.name} has ${record.waves} waves; there is no wave ${wave} to approve`,
      );
    }

    const revision = record?.revision ?? plan.revision;
    const { by, user } = await whoIsAsking(cluster, ctx.io.env);
    const approval: Approval = { by, ...(user ? { user } : {}), at: new Date().toISOString(), revision };
    let existing: Approval | undefined;
    await wrapKube(
      () =>
        writingDecision(plan, () =>
          updateDecisions(cluster, plan.controlNamespace, plan.name, async (data) => {
            existing = decodeApprovals(data)[wave];
            if (existing && (existing.revision === undefined || existing.revision === revision)) return undefined;
            existing = undefined;
            return { ...data, [approvalKey(wave)]: encodeApproval(approval) };
          }),
        ),
      `recording the approval of wave ${wave} of plan ${plan.name} in ${plan.controlNamespace}/${controlName(plan.name)}`,
    );
    report(ctx, plan.name, wave, existing ?? approval, existing !== undefined, clusterName);
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
