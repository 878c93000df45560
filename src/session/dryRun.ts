// What `kwave plan` reads of the cluster, and nothing else: the selected pods page by page (of
// each only what the report needs), the nodes for zones, the PDBs and every pod they count, the
// owners; then the one assessment of the selection that `kwave run` makes too (assessment.ts);
// and the admission webhooks that would judge the run's writes (admissionWebhooks.ts).
// Only reads: nothing is written to the cluster.
import type {
  V1Node,
  V1ObjectMeta,
  V1Pod,
  V1PodCondition,
  V1PodDisruptionBudget,
  V1PodStatus,
} from '@kubernetes/client-node';
import { KubeError, kubeErrorToKwave, wrapKube, type Cluster, type PageSink } from '../cluster/index.js';
import { decodePodBrief } from '../cluster/decode.js';
import { isForbidden } from '../cluster/kubeError.js';
import { resizesAny } from '../inplace/changes.js';
import { podCondition } from '../inplace/podView.js';
import type { Plan } from '../plan/types.js';
import type { RolloutRecord } from '../record/record.js';
import { standingHalt } from '../record/standingHalt.js';
import { renderSelector } from '../rollout/labelSelector.js';
import type { OwnerEntry } from '../rollout/owners.js';
import { assembleSelection, intakeOf, type FleetIntake, type FleetSelection } from '../rollout/select.js';
import type { WebhookConfiguration } from '../cluster/admissionRequests.js';
import { readAdmissionWebhooks, type AdmissionWebhooks } from './admissionWebhooks.js';
import { assessSelection, type SelectionFindings } from './assessment.js';
import { readZones, type ZonesRead } from './nodes.js';
import { clusterWorkloadReader, discoverOwners, updatePermissionProblems, type ReadWorkload } from './owners.js';

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
  /** The admission webhook configurations; absent: the webhooks on kwave's writes are not named. */
  listWebhookConfigurations?: () => Promise<WebhookConfiguration[]>;
}

/**
 * Pods per list page. Half the default: each page's parsed JSON lives only while it is classified,
 * so smaller pages hold less at once (about 6 MB less peak RSS than pages of 500 at 10,000 and
 * 50,000 pods, for the same CPU and wall time; pages of 100 are slower).
 */
const PAGE_SIZE = 250;

/** The sources of a connected cluster; `readRecord` reads the plan's rollout record. */
export function clusterSources(cluster: Cluster, readRecord: () => Promise<RolloutRecord | undefined>): PlanSources {
  return {
    readRecord,
    listPods: async (namespace, labelSelector, onPage) => {
      await cluster.listPodsByPage(namespace, { labelSelector, limit: PAGE_SIZE }, onPage, decodePodBrief);
    },
    listNodes: () => cluster.listNodes(),
    listPdbs: async (namespace) => (await cluster.listPdbs(namespace)).items,
    readWorkload: clusterWorkloadReader(cluster),
    updatePermissionProblems: (entries) => updatePermissionProblems(cluster, entries),
    listWebhookConfigurations: () => cluster.listWebhookConfigurations(),
  };
}

/**
 * What the dry run still reads of a pod once it is classified: names and labels, owners
 * (spec.owners), deletion and whether it is Ready (PDB arithmetic: podView.isPodReady); for a plan
 * that resizes, the containers too (their resources and resize policies, shown per pod). At
 * 50,000 pods the whole views were most of the command's memory.
 */
type PlannedView = (pod: V1Pod) => V1Pod;

/**
 * A fresh PlannedView for one listing. Pods that share a value share its object: the Ready
 * condition is kept as its status alone (one frozen status per value), and a pod whose labels
 * equal those of the pod kept before it (a workload's pods come one after the other) shares that
 * pod's labels object: 120 bytes held a simulator pod, where a view each would hold 300.
 */
function plannedViews(keepContainers: boolean): PlannedView {
  const statuses = new Map<string, V1PodStatus>();
  const noStatus: V1PodStatus = Object.freeze({});
  let lastLabels: Record<string, string> | undefined;
  return (pod) => {
    const md = pod.metadata!;
    const metadata: V1ObjectMeta = { name: md.name!, namespace: md.namespace! };
    if (md.labels) metadata.labels = lastLabels = sameLabels(md.labels, lastLabels) ? lastLabels : md.labels;
    if (md.ownerReferences) metadata.ownerReferences = md.ownerReferences;
    if (md.deletionTimestamp) metadata.deletionTimestamp = md.deletionTimestamp;
    const spec = keepContainers && pod.spec ? { spec: { containers: pod.spec.containers } } : {};
    const ready = podCondition(pod, 'Ready')?.status;
    if (ready === undefined) return { metadata, ...spec, status: noStatus };
    let status = statuses.get(ready);
    if (!status)
      statuses.set(
        ready,
        (status = Object.freeze({
          conditions: Object.freeze([Object.freeze({ type: 'Ready', status: ready })]) as V1PodCondition[],
        })),
      );
    return { metadata, ...spec, status };
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
): Promise<{ selection: FleetSelection; zones: ZonesRead }> {
  const keep = plannedViews(resizesAny(plan.update.containers));
  const pages = await fromEachPage(sources, plan.target.namespaces, renderSelector(plan.target.selector), (pods) => [
    intakeOf(plan, pods, keep),
  ]);
  const intake: FleetIntake = {
    pods: pages.flatMap((p) => p.pods),
    problems: pages.flatMap((p) => p.problems),
    leaving: pages.flatMap((p) => p.leaving),
  };
  const zones = await wrapKube(() => readZones(() => sources.listNodes(), plan.strategy.order), 'listing nodes');
  return { selection: assembleSelection(plan, intake, zones.zones), zones };
}

/** The PDBs to check the selection against; a warning instead when they may not be listed. */
async function readBudgets(
  plan: Plan,
  sources: PlanSources,
  selection: FleetSelection,
): Promise<Pick<SelectionFindings, 'budgets' | 'readProblems'> | undefined> {
  if (!sources.listPdbs) return undefined;
  const pdbs: V1PodDisruptionBudget[] = [];
  for (const ns of plan.target.namespaces) {
    try {
      pdbs.push(...(await sources.listPdbs(ns)));
    } catch (err) {
      if (isForbidden(err))
        return {
          readProblems: [
            {
              kind: 'pdb-unknown',
              severity: 'warning',
              message: `listing PodDisruptionBudgets in namespace ${ns} is forbidden: they are not checked, and kwave run will not respect them`,
            },
          ],
        };
      if (err instanceof KubeError) throw kubeErrorToKwave(err, `listing PodDisruptionBudgets in namespace ${ns}`);
      throw err;
    }
  }
  if (pdbs.length === 0) return undefined;
  // A PDB counts every pod it selects, not only the plan's.
  const everyPod = await fromEachPage(sources, plan.target.namespaces, '', (pods) => pods);
  return { budgets: { pdbs, pods: everyPod.length > 0 ? everyPod : selection.selected.map((s) => s.pod) } };
}

/**
 * The dry run's reading of the cluster: the selection assessed (assessment.ts, as `kwave run`
 * does), the nodes' zones and the owners; a halt that stands is a warning. No writes.
 */
export async function readDryRun(
  plan: Plan,
  sources: PlanSources,
): Promise<{
  selection: FleetSelection;
  zones: ZonesRead;
  owners: OwnerEntry[];
  admission: AdmissionWebhooks | undefined;
}> {
  const { selection, zones } = await readSelection(plan, sources);
  const budgets = plan.strategy.respectPodDisruptionBudgets ? await readBudgets(plan, sources, selection) : undefined;
  const owners = sources.readWorkload ? await discoverOwners(sources.readWorkload, plan, selection.selected) : [];
  assessSelection(selection, {
    ...budgets,
    owners,
    ownerPatchRefusals: (await sources.updatePermissionProblems?.(owners)) ?? [],
  });
  const standing = standingHalt(await sources.readRecord?.(), plan);
  if (standing) {
    const retry = standing.how === 'ended' ? '; `kwave run --retry` would upgrade its failed pods again' : '';
    selection.problems.push({
      kind: 'halted',
      severity: 'warning',
      message: `this revision halted (${standing.halt.message}): kwave run carries the halt on and upgrades nothing${retry}`,
    });
  }
  const admission = sources.listWebhookConfigurations
    ? await readAdmissionWebhooks(plan, sources.listWebhookConfigurations)
    : undefined;
  return { selection, zones, owners, admission };
}
