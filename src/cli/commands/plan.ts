// `kwave plan PLAN`: the dry run. Loads the plan, reads the cluster (session/dryRun.ts: the
// selected pods, the nodes for zones, PDBs, owners, and the assessment `kwave run` makes too),
// and shows per wave the pods `kwave run` would upgrade, the pods it would skip or defer, and the
// problems that would refuse the run. Only reads: nothing is written to the cluster.
// Exit 0 when the run would go (or has nothing to do), 2 when the plan is invalid or a problem
// would refuse the run.
import { ExitCode, KwaveError } from '../../errors.js';
import type { Cluster } from '../../cluster/index.js';
import type { Plan } from '../../plan/types.js';
import { decodeRecord } from '../../record/codec.js';
import { orderSteps } from '../../rollout/clusterOrder.js';
import { connectFor } from '../../session/connection.js';
import { clusterSources, readDryRun, type PlanSources } from '../../session/dryRun.js';
import type { CommandContext } from '../context.js';
import { loadPlanOrReport } from '../loadPlan.js';
import { writeJsonInPieces } from '../output/jsonPieces.js';
import { planReport, renderPlanText, type PlanReport } from '../planView.js';
import { readRecordConfigMap } from './status.js';

/** Reads the cluster and builds the report; no writes. */
export async function dryRun(plan: Plan, sources: PlanSources): Promise<PlanReport> {
  const { selection, zones, owners, admission } = await readDryRun(plan, sources);
  return planReport(plan, selection, zones.info, Date.now(), zones.nodes, owners, admission);
}

/** The sources of the cluster the command connected to. */
function sourcesOf(cluster: Cluster, plan: Plan): PlanSources {
  return clusterSources(cluster, async () => {
    const cm = await readRecordConfigMap(cluster, plan);
    const decoded = cm && decodeRecord(cm);
    return decoded?.ok ? decoded.record : undefined;
  });
}

export async function run(ctx: CommandContext, args: string[], opts: Record<string, unknown>): Promise<number> {
  const file = args[0]!;
  const { io, common } = ctx;
  const plan = await loadPlanOrReport(ctx, file);
  if (!plan) return ExitCode.BAD_INPUT;
  if (plan.clusters) return planAcrossClusters(ctx, plan, opts.all === true);
  const cluster = connectFor(common, io.env, plan);
  try {
    const report = await dryRun(plan, sourcesOf(cluster, plan));
    if (common.output === 'json') {
      writeJsonInPieces((text) => io.stdout.write(text), report);
      io.stdout.write('\n');
    } else io.stdout.write(renderPlanText(report, { all: opts.all === true }).join('\n') + '\n');
    return report.refused ? ExitCode.BAD_INPUT : ExitCode.OK;
  } finally {
    cluster.close();
  }
}

/**
 * A multi-cluster plan's dry run: each cluster's report (read through its own context), then the
 * order its waves would run in across the clusters. Exit 2 if any cluster's run would be refused.
 */
async function planAcrossClusters(ctx: CommandContext, plan: Plan, all: boolean): Promise<number> {
  const { io, common } = ctx;
  const multi = plan.clusters!;
  if (common.context !== undefined)
    throw new KwaveError(
      'USAGE',
      `--context: the plan names its clusters' contexts (spec.clusters: ${multi.list.map((c) => c.context).join(', ')}); leave --context out`,
    );
  const reports: { cluster: string; context: string; report: PlanReport }[] = [];
  for (const c of multi.list) {
    const cluster = connectFor({ ...common, context: c.context }, io.env, plan);
    try {
      reports.push({ cluster: c.name, context: c.context, report: await dryRun(plan, sourcesOf(cluster, plan)) });
    } catch (err) {
      if (err instanceof KwaveError)
        throw new KwaveError(err.code, `cluster ${c.name} (context ${c.context}): ${err.message}`, err.exitCode);
      throw err;
    } finally {
      cluster.close();
    }
  }
  const pods = new Map(
    reports.flatMap((r) => r.report.waves.map((w) => [`${r.cluster}:${w.wave}`, w.pods.length] as const)),
  );
  const order = orderSteps(
    multi.order,
    reports.map((r) => ({ name: r.cluster, waves: r.report.waves.map((w) => w.wave) })),
  ).map((s) => ({ ...s, pods: pods.get(`${s.cluster}:${s.wave}`) ?? 0 }));
  const refused = reports.filter((r) => r.report.refused).map((r) => r.cluster);
  if (common.output === 'json') {
    for (const r of reports)
      io.stdout.write(JSON.stringify({ cluster: r.cluster, context: r.context, ...r.report }) + '\n');
    io.stdout.write(
      JSON.stringify({
        plan: plan.name,
        revision: plan.revision,
        clusterOrder: multi.order,
        clusters: multi.list,
        order,
        refused,
      }) + '\n',
    );
  } else {
    const out: string[] = [];
    for (const r of reports)
      out.push(`== cluster ${r.cluster} (context ${r.context}) ==`, ...renderPlanText(r.report, { all }), '');
    out.push(
      `Order across ${multi.list.length} clusters (${multi.order}): ${order.length === 0 ? 'nothing to do' : `${order.length} step${order.length === 1 ? '' : 's'}, one at a time; a halt in any cluster halts them all`}`,
    );
    order.forEach((s, i) =>
      out.push(`  ${i + 1}. ${s.cluster} wave ${s.wave} (${s.pods} pod${s.pods === 1 ? '' : 's'})`),
    );
    if (refused.length > 0) out.push(`Refused in ${refused.join(', ')}: kwave run would touch no cluster`);
    io.stdout.write(out.join('\n') + '\n');
  }
  return refused.length > 0 ? ExitCode.BAD_INPUT : ExitCode.OK;
}
