// `kwave approve PLAN [--wave N]`: records the approval of a wave's approval gate in the rollout
// record, as its own data key `approval.wave-N` = {"by", "at", "revision"}, written with a JSON
// merge patch of that one key. The runner writes only its own keys, so the two never conflict.
// Without --wave it approves the wave the rollout is waiting on; exit 2 when none waits, or when
// the plan was never run. A multi-cluster plan: the cluster `--cluster NAME` names, else the one
// waiting; `--wave N` with none waiting on it approves wave N ahead of time in every cluster.
import { loadPlanOrReport } from '../loadPlan.js';
import { chooseClusters } from '../clusterChoice.js';
import { hostname } from 'node:os';
import { connectFor } from '../../session/connection.js';
import { KubeError, wrapKube } from '../../cluster/kubeError.js';
import { ExitCode, KwaveError } from '../../errors.js';
import { recordName, type Approval } from '../../record/record.js';
import { approvalKey, decodeApprovals, decodeRecord, encodeApproval } from '../../record/codec.js';
import { currentUser } from '../../lease/runnerIdentity.js';
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
    const existing = decodeApprovals(cm.data ?? {})[wave];
    if (existing && (existing.revision === undefined || existing.revision === revision)) {
      report(ctx, plan.name, wave, existing, true, clusterName);
      return ExitCode.OK;
    }

    const approval: Approval = {
      by: `${currentUser(ctx.io.env)}@${hostname()}`,
      at: new Date().toISOString(),
      revision,
    };
    await wrapKube(
      () =>
        cluster
          .patchConfigMap(namespace, name, { data: { [approvalKey(wave)]: encodeApproval(approval) } })
          .catch((err: unknown) => {
            throw err instanceof KubeError && err.code === 404 ? notRun(plan) : err;
          }),
      `recording the approval of wave ${wave} of plan ${plan.name}`,
    );
    report(ctx, plan.name, wave, approval, false, clusterName);
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
