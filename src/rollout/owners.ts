// Owners kept in step (`spec.owners`): which controller would recreate each selected pod, from
// which template, and what kwave does about it. Pure: the shell (session/owners.ts) reads the
// workloads through cluster/owners.ts and hands them in; this file decides and builds the patches.
//
// Why only OnDelete StatefulSets and DaemonSets are updated: their controllers replace a pod only
// when it is deleted, so a new template changes nothing that runs and only decides what a
// replacement runs. A Deployment's controller answers a template change with a new ReplicaSet
// and replaces every pod; a RollingUpdate StatefulSet or DaemonSet deletes and recreates every
// pod: either would undo the in-place upgrade, so `update` is refused for them.
import type { V1Pod } from '@kubernetes/client-node';
import type { WorkloadKind, WorkloadView } from '../cluster/owners.js';
import type { Plan } from '../plan/types.js';
import { isAtTarget } from '../inplace/atTarget.js';
import { podKey } from '../inplace/podView.js';
import type { PodProblem, SelectedPod } from './select.js';

/** On an updated owner: what kwave changed, so a rollback can put it back. JSON of `OwnerState`. */
export const OWNER_STATE_ANNOTATION = 'kwave.dev/in-place-owner';

export interface OwnerState {
  plan: string;
  revision: string;
  /** Per container: the template's image before kwave changed it, and the one it set. */
  containers: Record<string, { fromImage: string; toImage: string }>;
}

/** A pod's controller, from its ownerReferences. */
export interface ControllerRef {
  kind: string;
  name: string;
}

export function controllerOf(pod: V1Pod): ControllerRef | undefined {
  const ref = (pod.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
  return ref ? { kind: ref.kind, name: ref.name } : undefined;
}

/** A workload as read, or why it could not be. */
export type OwnerLookup =
  | { ok: true; workload: WorkloadView }
  | { ok: false; kind: string; name: string; namespace: string; forbidden: boolean; message: string };

/**
 * What kwave does about one owner:
 * - `update`: an OnDelete StatefulSet/DaemonSet whose template will be set to the targets once its selected pods are upgraded;
 * - `in-step`: its template already names the target images;
 * - `warn`: replacements would run the old image (owners: warn, or a kind kwave does not update);
 * - `refuse`: owners: update asked for something that would recreate every pod (the run is refused, exit 2);
 * - `unknown`: the owner could not be read.
 */
export type OwnerAction = 'update' | 'in-step' | 'warn' | 'refuse' | 'unknown';

export interface OwnerEntry {
  kind: string;
  namespace: string;
  name: string;
  /** The controller's update strategy, when it has one (`OnDelete`, `RollingUpdate`, `Recreate`). */
  strategy?: string;
  /** Selected pods it owns, as `namespace/name`. */
  pods: string[];
  action: OwnerAction;
  message: string;
  /** The workload as read (absent when it could not be). */
  workload?: WorkloadView;
}

/** What the owner decisions need of a selected pod (a SelectedPod fits). */
export type OwnedPod = Pick<SelectedPod, 'namespace' | 'name' | 'pod'>;

/** How a pod's owner resolves: the pod's controller ref, then (for a ReplicaSet) the Deployment above it. */
export interface ResolvedOwner {
  /** `Kind namespace/name` of the top owner, the grouping key. */
  key: string;
  lookup: OwnerLookup;
}

const label = (kind: string, namespace: string, name: string) => `${kind} ${namespace}/${name}`;

/** The images the plan sets, for the containers the template has. */
function targetsFor(w: WorkloadView, plan: Pick<Plan, 'update'>): { name: string; from: string; to: string }[] {
  return plan.update.containers
    .filter((c) => c.image !== undefined && w.templateImages[c.name] !== undefined)
    .map((c) => ({ name: c.name, from: w.templateImages[c.name]!, to: c.image as string }));
}

const oldImages = (w: WorkloadView, plan: Pick<Plan, 'update'>) =>
  targetsFor(w, plan)
    .filter((t) => t.from !== t.to)
    .map((t) => `${t.name} ${t.from}`)
    .join(', ');

function decideOne(plan: Pick<Plan, 'owners' | 'update'>, lookup: OwnerLookup, pods: string[]): OwnerEntry {
  const n = `${pods.length} selected pod${pods.length === 1 ? '' : 's'}`;
  if (!lookup.ok) {
    const base = { kind: lookup.kind, namespace: lookup.namespace, name: lookup.name, pods };
    const why = `${label(lookup.kind, lookup.namespace, lookup.name)} (owner of ${n}) could not be read: ${lookup.message}`;
    return plan.owners === 'update'
      ? { ...base, action: 'refuse', message: `owners: update: ${why}; kwave cannot tell whether updating it is safe` }
      : { ...base, action: 'unknown', message: `${why}; whether its replacements would run the old image is unknown` };
  }
  const w = lookup.workload;
  const base = {
    kind: w.kind,
    namespace: w.namespace,
    name: w.name,
    ...(w.strategy ? { strategy: w.strategy } : {}),
    pods,
    workload: w,
  };
  const who = `${label(w.kind, w.namespace, w.name)}${w.strategy ? ` (${w.strategy})` : ''}, owner of ${n}`;
  const stale = oldImages(w, plan);
  if (!stale)
    return { ...base, action: 'in-step', message: `${who}: its pod template already names the target images` };
  const onDelete = (w.kind === 'StatefulSet' || w.kind === 'DaemonSet') && w.strategy === 'OnDelete';
  if (plan.owners === 'update') {
    if (onDelete) {
      const unselected =
        w.replicas !== undefined && w.replicas > pods.length
          ? `; ${w.replicas - pods.length} of its ${w.replicas} pods are not selected, and would also come back on the new image if recreated`
          : '';
      return {
        ...base,
        action: 'update',
        message: `${who}: its pod template (${stale}) will be set to the target images once its selected pods are upgraded${unselected}`,
      };
    }
    return { ...base, action: 'refuse', message: `owners: update refused for ${who}: ${refusalReason(w)}` };
  }
  const hint = onDelete ? '; owners: update would keep its template in step' : '';
  return {
    ...base,
    action: 'warn',
    message: `${who}: its pod template still names ${stale}: pods it recreates (after a deletion, an eviction or a node loss) will run the old image${hint}`,
  };
}

function refusalReason(w: WorkloadView): string {
  switch (w.kind as WorkloadKind) {
    case 'Deployment':
      return "a change to a Deployment's pod template makes its controller roll out a new ReplicaSet and recreate every pod, undoing the in-place upgrade; change the Deployment through its own rollout, or use owners: warn";
    case 'StatefulSet':
    case 'DaemonSet':
      return `with updateStrategy ${w.strategy ?? 'RollingUpdate'} its controller deletes and recreates every pod when the template changes, undoing the in-place upgrade; set updateStrategy: OnDelete, or use owners: warn`;
    default:
      return 'kwave keeps only OnDelete StatefulSets and DaemonSets in step; use owners: warn';
  }
}

/**
 * Groups the selected pods by their top owner and decides each. `resolve` gives a pod's owner
 * (undefined: no controller, nothing to keep in step). Entries are in first-pod order.
 */
export function decideOwners<P extends OwnedPod>(
  plan: Pick<Plan, 'owners' | 'update'>,
  pods: readonly P[],
  resolve: (pod: P) => ResolvedOwner | undefined,
): OwnerEntry[] {
  const groups = new Map<string, { lookup: OwnerLookup; pods: string[] }>();
  for (const p of pods) {
    const owner = resolve(p);
    if (!owner) continue;
    const g = groups.get(owner.key) ?? { lookup: owner.lookup, pods: [] };
    g.pods.push(podKey(p));
    groups.set(owner.key, g);
  }
  return [...groups.values()].map((g) => decideOne(plan, g.lookup, g.pods));
}

/** Owner entries as problems of the selection: refusals are errors (the run is refused), warnings and unknowns warnings. */
export function ownerProblems(entries: readonly OwnerEntry[]): PodProblem[] {
  return entries.flatMap((e): PodProblem[] => {
    if (e.action === 'refuse') return [{ kind: 'owner', severity: 'error', message: e.message }];
    if (e.action === 'warn' || e.action === 'unknown')
      return [{ kind: 'owner', severity: 'warning', message: e.message }];
    return [];
  });
}

/** The `update` owners whose selected pods are all at the target now (`current` looks a pod up by key). */
export function updatesDue(
  entries: readonly OwnerEntry[],
  current: (key: string) => V1Pod | undefined,
  plan: Pick<Plan, 'update' | 'readinessGate'>,
): OwnerEntry[] {
  return entries.filter(
    (e) =>
      e.action === 'update' &&
      e.workload &&
      e.pods.every((k) => {
        const pod = current(k);
        return pod !== undefined && isAtTarget(pod, plan);
      }),
  );
}

/**
 * The strategic-merge patch that sets an owner's template to the targets and records what it
 * was, guarded by the resourceVersion read (a 409 means someone changed the owner: read again).
 */
export function templatePatch(w: WorkloadView, plan: Pick<Plan, 'name' | 'revision' | 'update'>): object {
  const targets = targetsFor(w, plan);
  const state: OwnerState = {
    plan: plan.name,
    revision: plan.revision,
    containers: Object.fromEntries(
      targets.map((t) => [t.name, { fromImage: priorImage(w, plan, t.name) ?? t.from, toImage: t.to }]),
    ),
  };
  return {
    metadata: { resourceVersion: w.resourceVersion, annotations: { [OWNER_STATE_ANNOTATION]: JSON.stringify(state) } },
    spec: { template: { spec: { containers: targets.map((t) => ({ name: t.name, image: t.to })) } } },
  };
}

/** The image before this plan first changed the template (kept across re-runs of the same plan). */
function priorImage(w: WorkloadView, plan: Pick<Plan, 'name'>, container: string): string | undefined {
  const state = readOwnerState(w);
  return state?.plan === plan.name ? state.containers[container]?.fromImage : undefined;
}

export function readOwnerState(w: WorkloadView): OwnerState | undefined {
  const text = w.annotations[OWNER_STATE_ANNOTATION];
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as Partial<OwnerState>;
    if (
      typeof v.plan !== 'string' ||
      typeof v.revision !== 'string' ||
      typeof v.containers !== 'object' ||
      v.containers === null
    )
      return undefined;
    return v as OwnerState;
  } catch {
    return undefined;
  }
}

/**
 * After a rollback: the patch that puts back the template this plan changed, or why not.
 * Only containers still at the image kwave set are put back (someone else's later change stays).
 */
export function revertPatch(
  w: WorkloadView,
  plan: Pick<Plan, 'name'>,
): { patch: object; restored: string[] } | { skip: string } {
  const state = readOwnerState(w);
  if (!state || state.plan !== plan.name) return { skip: 'its template was not changed by this plan' };
  const back = Object.entries(state.containers).filter(([name, c]) => w.templateImages[name] === c.toImage);
  const patch = {
    metadata: { resourceVersion: w.resourceVersion, annotations: { [OWNER_STATE_ANNOTATION]: null } },
    ...(back.length
      ? { spec: { template: { spec: { containers: back.map(([name, c]) => ({ name, image: c.fromImage })) } } } }
      : {}),
  };
  return { patch, restored: back.map(([name, c]) => `${name} ${c.fromImage}`) };
}
