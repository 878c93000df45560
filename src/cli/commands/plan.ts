// `kwave plan PLAN`: the dry run. Loads the plan, lists the selected pods (and the nodes, for
// zones), and shows per wave the pods `kwave run` would upgrade, the pods it would skip or defer,
// and the problems that would refuse the run. Only reads: nothing is written to the cluster.
// Exit 0 when the run would go (or has nothing to do), 2 when the plan is invalid or a problem
// would refuse the run.
import type {
  V1Node,
  V1ObjectMeta,
  V1Pod,
  V1PodCondition,
  V1PodDisruptionBudget,
  V1PodStatus,
} from '@kubernetes/client-node';
import { ExitCode } from '../../errors.js';
import { wrapKube, type Cluster, type PageSink } from '../../cluster/index.js';
import { connectFor } from '../connectFor.js';
import { decodePodBrief } from '../../cluster/decode.js';
import { isForbidden } from '../../cluster/kubeError.js';
import type { Plan } from '../../plan/types.js';
import { assembleSelection, intakeOf, zonesOf, type FleetIntake, type FleetSelection } from '../../rollout/select.js';
import { podCondition } from '../../inplace/podView.js';
import { pdbProblems } from '../../rollout/disruptionBudget.js';
import { renderSelector } from '../../rollout/labelSelector.js';
import type { CommandContext } from '../context.js';
import { loadPlanOrReport } from '../loadPlan.js';
import { clusterWorkloadReader, discoverOwners, updatePermissionProblems, type ReadWorkload } from '../owners.js';
import { ownerProblems, type OwnerEntry } from '../../rollout/owners.js';
import { planReport, renderPlanText, type PlanReport, type ZoneInfo } from '../planView.js';
import { writeJsonInPieces } from '../output/jsonPieces.js';
import { KwaveError } from '../../errors.js';
import { orderSteps } from '../../rollout/clusterOrder.js';
import { decodeRecord } from '../../record/codec.js';
import type { RolloutRecord } from '../../record/record.js';
import { standingHalt } from '../../record/standingHalt.js';
import { readRecordConfigMap } from './status.js';

/** How the command reads the cluster; tests pass fakes. */
export interface PlanSources {
  /** Hands the pods over page by page (`first`: a list begins, or begins again: drop what came before). */
  listPods(namespace: string, labelSelector: string, onPage: PageSink<V1Pod>): Promise<void>;
  listNodes(): Promise<V1Node[]>;
  /** Without it PDBs are not checked. */
  listPdbs?(namespace: string): Promise<V1PodDisruptionBudget[]>;
  /** Reads a pod's owner (spec.owners); absent: owners are not looked up. */
  readWorkload?: ReadWorkload;
  /** With owners: update, whether the owners to update may be patched (messages of the refusals). */
  updatePermissionProblems?: (entries: readonly OwnerEntry[]) => Promise<string[]>;
  /** The plan's rollout record; absent: a halt that stands is not reported. */
  readRecord?: () => Promise<RolloutRecord | undefined>;
}

/**
 * Pods per list page. Half the default: each page's parsed JSON lives only while it is classified,
 * so smaller pages hold less at once (50,000 pods: peak RSS 237 -> 231 MB, 10,000: 176 -> 170 MB,
 * the same CPU and wall time within noise; 100 was slower).
 */
const PAGE_SIZE = 250;

function clusterSources(cluster: Cluster, plan: Plan): PlanSources {
  return {
    readRecord: async () => {
      const cm = await readRecordConfigMap(cluster, plan);
      const decoded = cm && decodeRecord(cm);
      return decoded?.ok ? decoded.record : undefined;
    },
    listPods: async (namespace, labelSelector, onPage) => {
      await cluster.listPodsByPage(namespace, { labelSelector, limit: PAGE_SIZE }, onPage, decodePodBrief);
    },
    listNodes: () => cluster.listNodes(),
    listPdbs: async (namespace) => (await cluster.listPdbs(namespace)).items,
    readWorkload: clusterWorkloadReader(cluster),
    updatePermissionProblems: (entries) => updatePermissionProblems(cluster, entries),
  };
}

/** The nodes' zones, or why they are unknown. Forbidden (403) is expected with a namespaced Role. */
async function readZones(
  sources: PlanSources,
  order: Plan['strategy']['order'],
): Promise<{ zones: Map<string, string>; info: ZoneInfo; nodes?: Map<string, V1Node> }> {
  try {
    const nodes = await sources.listNodes();
    return {
      zones: zonesOf(nodes),
      info: { known: true },
      nodes: new Map(nodes.flatMap((n) => (n.metadata?.name ? [[n.metadata.name, n] as const] : []))),
    };
  } catch (err) {
    if (!isForbidden(err)) throw err;
    const effect = order === 'spread-zones' ? '; order spread-zones sees every pod as zoneless' : '';
    return { zones: new Map(), info: { known: false, reason: `listing nodes is forbidden (${err.message})${effect}` } };
  }
}

/**
 * What the dry run still reads of a pod once it is classified: names and labels, owners
 * (spec.owners), deletion and whether it is Ready (PDB arithmetic: podView.isPodReady). At 50,000
 * pods the whole views were most of the command's memory.
 */
type PlannedView = (pod: V1Pod) => V1Pod;

/**
 * A fresh PlannedView for one listing. Pods that share a value share its object: the Ready
 * condition is kept as its status alone (one frozen status per value), and a pod whose labels
 * equal those of the pod kept before it (a workload's pods come one after the other) shares that
 * pod's labels object. 50,000 simulator pods: 300 -> 120 bytes a pod.
 */
function plannedViews(): PlannedView {
  const statuses = new Map<string, V1PodStatus>();
  const noStatus: V1PodStatus = Object.freeze({});
  let lastLabels: Record<string, string> | undefined;
  return (pod) => {
    const md = pod.metadata!;
    const metadata: V1ObjectMeta = { name: md.name!, namespace: md.namespace! };
    if (md.labels) metadata.labels = lastLabels = sameLabels(md.labels, lastLabels) ? lastLabels : md.labels;
    if (md.ownerReferences) metadata.ownerReferences = md.ownerReferences;
    if (md.deletionTimestamp) metadata.deletionTimestamp = md.deletionTimestamp;
    const ready = podCondition(pod, 'Ready')?.status;
    if (ready === undefined) return { metadata, status: noStatus };
    let status = statuses.get(ready);
    if (!status)
      statuses.set(
        ready,
        (status = Object.freeze({
          conditions: Object.freeze([Object.freeze({ type: 'Ready', status: ready })]) as V1PodCondition[],
        })),
      );
    return { metadata, status };
  };
}

function sameLabels(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>> | undefined,
): b is Record<string, string> {
  if (!b) return false;
  let keys = 0;
  for (const k in a) {
    if (a[k] !== b[k]) return false;
    keys++;
  }
  for (const _ in b) keys--;
  return keys === 0;
}

/**
 * What `take` makes of each page of pods the selector matches, namespace after namespace; a
 * KubeError names the namespace. A list that starts over drops what its namespace gave before.
 */
async function fromEachPage<T>(
  sources: PlanSources,
  namespaces: readonly string[],
  labelSelector: string,
  take: (pods: V1Pod[]) => T[],
): Promise<T[]> {
  const out: T[] = [];
  for (const ns of namespaces) {
    let taken: T[] = [];
    await wrapKube(
      () =>
        sources.listPods(ns, labelSelector, (pods, first) => {
          if (first) taken = [];
          for (const t of take(pods)) taken.push(t);
        }),
      `listing pods in namespace ${ns}`,
    );
    for (const t of taken) out.push(t);
  }
  return out;
}

/**
 * The selection and the nodes' zones. The pods are classified page by page as the list comes,
 * and of each only its PlannedView is kept; the classification is dropped once the selection is made.
 */
async function readSelection(
  plan: Plan,
  sources: PlanSources,
): Promise<{ selection: FleetSelection; zones: Awaited<ReturnType<typeof readZones>> }> {
  const keep = plannedViews();
  const pages = await fromEachPage(sources, plan.target.namespaces, renderSelector(plan.target.selector), (pods) => [
    intakeOf(plan, pods, keep),
  ]);
  const intake: FleetIntake = { pods: pages.flatMap((p) => p.pods), problems: pages.flatMap((p) => p.problems) };
  const zones = await wrapKube(() => readZones(sources, plan.strategy.order), 'listing nodes');
  return { selection: assembleSelection(plan, intake, zones.zones), zones };
}

/** Reads the cluster and builds the report; no writes. */
export async function dryRun(plan: Plan, sources: PlanSources): Promise<PlanReport> {
  const { selection, zones } = await readSelection(plan, sources);
  if (plan.strategy.respectPodDisruptionBudgets)
    selection.problems.push(...(await budgetProblems(plan, sources, selection)));
  const owners = sources.readWorkload ? await discoverOwners(sources.readWorkload, plan, selection.selected) : [];
  selection.problems.push(...ownerProblems(owners));
  for (const message of (await sources.updatePermissionProblems?.(owners)) ?? [])
    selection.problems.push({ kind: 'owner', severity: 'error', message });
  const standing = standingHalt(await sources.readRecord?.(), plan);
  if (standing) {
    const retry = standing.how === 'ended' ? '; `kwave run --retry` would upgrade its failed pods again' : '';
    selection.problems.push({
      kind: 'halted',
      severity: 'warning',
      message: `this revision halted (${standing.halt.message}): kwave run carries the halt on and upgrades nothing${retry}`,
    });
  }
  return planReport(plan, selection, zones.info, Date.now(), zones.nodes, owners);
}

/** PDBs that would make the run stall; a warning instead when they may not be listed. */
async function budgetProblems(
  plan: Plan,
  sources: PlanSources,
  selection: FleetSelection,
): Promise<FleetSelection['problems']> {
  const listPdbs = sources.listPdbs;
  if (!listPdbs) return [];
  const pdbs: V1PodDisruptionBudget[] = [];
  for (const ns of plan.target.namespaces) {
    const listed = await wrapKube(
      () =>
        listPdbs(ns).catch((err: unknown) => {
          if (isForbidden(err)) return undefined;
          throw err;
        }),
      `listing PodDisruptionBudgets in namespace ${ns}`,
    );
    if (listed === undefined)
      return [
        {
          kind: 'pdb-unknown',
          severity: 'warning',
          message: `listing PodDisruptionBudgets in namespace ${ns} is forbidden: they are not checked, and kwave run will not respect them`,
        },
      ];
    pdbs.push(...listed);
  }
  if (pdbs.length === 0) return [];
  // A PDB counts every pod it selects, not only the plan's.
  const everyPod = await fromEachPage(sources, plan.target.namespaces, '', (pods) => pods);
  return pdbProblems(selection.todo, pdbs, everyPod.length > 0 ? everyPod : selection.selected.map((s) => s.pod));
}

export async function run(ctx: CommandContext, args: string[], opts: Record<string, unknown>): Promise<number> {
  const file = args[0]!;
  const { io, common } = ctx;
  const plan = await loadPlanOrReport(ctx, file);
  if (!plan) return ExitCode.BAD_INPUT;
  if (plan.clusters) return planAcrossClusters(ctx, plan, opts.all === true);
  const cluster = connectFor(common, io.env, plan);
  try {
    const report = await dryRun(plan, clusterSources(cluster, plan));
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
      reports.push({ cluster: c.name, context: c.context, report: await dryRun(plan, clusterSources(cluster, plan)) });
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
