// The shell of `spec.owners` for `kwave plan`, `kwave run` and `kwave rollback`: reads each
// selected pod's owner (ReplicaSet → Deployment, StatefulSet, DaemonSet) through cluster/, lets
// rollout/owners.ts decide (what would refuse the run is assessment.ts's), and after the rollout
// patches (or, after a rollback, reverts) the templates of OnDelete owners. Touches: GET of the owners; with owners: update, a dry-run PATCH
// before the run (to know it is allowed) and the template PATCH after it.
import {
  checkWorkloadPatch,
  isForbidden,
  isWorkloadKind,
  KubeError,
  patchWorkload,
  readWorkload,
  WORKLOAD_RESOURCES,
  type Cluster,
  type WorkloadKind,
  type WorkloadView,
} from '../cluster/index.js';
import { ExitCode } from '../errors.js';
import type { Plan } from '../plan/types.js';
import { OPTIONAL_ROLES } from './accessNeeds.js';
import type { FleetSelection } from '../rollout/select.js';
import {
  controllerOf,
  OWNER_STATE_ANNOTATION,
  decideOwners,
  type ControllerRef,
  revertPatch,
  templatePatch,
  updatesDue,
  type OwnedPod,
  type OwnerEntry,
  type OwnerLookup,
  type ResolvedOwner,
} from '../rollout/owners.js';
import { podKey } from '../inplace/podView.js';
import type { V1Pod } from '@kubernetes/client-node';

export type ReadWorkload = (kind: WorkloadKind, namespace: string, name: string) => Promise<WorkloadView>;

export const clusterWorkloadReader =
  (cluster: Cluster): ReadWorkload =>
  (kind, namespace, name) =>
    readWorkload(cluster, kind, namespace, name);

/** `forbidden: cannot get statefulsets in namespace web — deploy/rbac.yaml grants it` (a patch: the optional Role), or the error's own words. */
function lookupError(
  err: unknown,
  verb: string,
  kind: WorkloadKind,
  namespace: string,
): { forbidden: boolean; message: string } {
  if (isForbidden(err))
    return {
      forbidden: true,
      message: `forbidden: cannot ${verb} ${WORKLOAD_RESOURCES[kind]} in namespace ${namespace} — ${verb === 'patch' ? OPTIONAL_ROLES.ownersUpdate : 'deploy/rbac.yaml'} grants it`,
    };
  return { forbidden: false, message: err instanceof Error ? err.message : String(err) };
}

/**
 * Reads every selected pod's owner (each owner once) and decides what to do about it. Owners of a
 * kind in `unreadable` (the permission preflight found its `get` missing) are not asked for: each
 * is reported as not read, and the API server sees no request it would refuse.
 */
export async function discoverOwners<P extends OwnedPod>(
  read: ReadWorkload,
  plan: Pick<Plan, 'owners' | 'update'>,
  pods: readonly P[],
  unreadable: ReadonlySet<string> = new Set(),
): Promise<OwnerEntry[]> {
  const lookups = new Map<string, Promise<OwnerLookup>>();
  const lookup = (kind: string, namespace: string, name: string): Promise<OwnerLookup> => {
    const key = `${kind} ${namespace}/${name}`;
    let found = lookups.get(key);
    if (!found && isWorkloadKind(kind) && unreadable.has(WORKLOAD_RESOURCES[kind])) {
      found = Promise.resolve({
        ok: false,
        kind,
        namespace,
        name,
        forbidden: true,
        message: `not read: cannot get ${WORKLOAD_RESOURCES[kind]} in namespace ${namespace} — deploy/rbac.yaml grants it`,
      });
      lookups.set(key, found);
    }
    if (!found) {
      found = isWorkloadKind(kind)
        ? read(kind, namespace, name).then(
            (workload): OwnerLookup => ({ ok: true, workload }),
            (err: unknown): OwnerLookup => ({
              ok: false,
              kind,
              namespace,
              name,
              ...lookupError(err, 'get', kind, namespace),
            }),
          )
        : Promise.resolve({
            ok: false,
            kind,
            namespace,
            name,
            forbidden: false,
            message: 'kwave reads only ReplicaSet, Deployment, StatefulSet and DaemonSet owners',
          });
      lookups.set(key, found);
    }
    return found;
  };
  const resolved = new Map<string, ResolvedOwner>();
  const resolve = async (p: P, ref: ControllerRef): Promise<void> => {
    let top = await lookup(ref.kind, p.namespace, ref.name);
    let key = `${ref.kind} ${p.namespace}/${ref.name}`;
    // A ReplicaSet's pods are the Deployment's: it is the Deployment's template that counts.
    const above = top.ok && top.workload.kind === 'ReplicaSet' ? top.workload.controller : undefined;
    if (above?.kind === 'Deployment') {
      top = await lookup('Deployment', p.namespace, above.name);
      key = `Deployment ${p.namespace}/${above.name}`;
    }
    resolved.set(podKey(p), { key, lookup: top });
  };
  // Only pods with a controller wait for a lookup: an async call per pod leaves about 600 bytes
  // of garbage (29 MB at 50,000 pods without owners, at the end of `kwave plan`, its memory peak).
  const waits: Promise<void>[] = [];
  for (const p of pods) {
    const ref = controllerOf(p.pod);
    if (ref) waits.push(resolve(p, ref));
  }
  await Promise.all(waits);
  return decideOwners(plan, pods, (p) => resolved.get(podKey(p)));
}

/** For each owner to update: may these credentials patch it? (a dry-run PATCH). The refusals, as messages. */
export async function updatePermissionProblems(cluster: Cluster, entries: readonly OwnerEntry[]): Promise<string[]> {
  const out: string[] = [];
  for (const e of entries) {
    if (e.action !== 'update' || !e.workload) continue;
    try {
      await checkWorkloadPatch(cluster, e.workload.kind, e.namespace, e.name);
    } catch (err) {
      const { message } = lookupError(err, 'patch', e.workload.kind, e.namespace);
      out.push(`owners: update: ${e.kind} ${e.namespace}/${e.name}: ${message}`);
    }
  }
  return out;
}

export interface OwnerStepResult {
  /** Lines for the person running kwave. */
  lines: string[];
  /** Failures (the rollout itself stands); `forbidden` when one was refused by RBAC. */
  failed: number;
  forbidden: boolean;
}

/** Patches with one re-read on 409 (someone changed the owner since it was read). */
async function patchFresh(
  cluster: Cluster,
  w: WorkloadView,
  build: (w: WorkloadView) => object | undefined,
): Promise<WorkloadView | undefined> {
  for (let attempt = 0; ; attempt++) {
    const body = build(w);
    if (!body) return undefined;
    try {
      return await patchWorkload(cluster, w.kind, w.namespace, w.name, body);
    } catch (err) {
      if (!(err instanceof KubeError && err.code === 409) || attempt > 0) throw err;
      w = await readWorkload(cluster, w.kind, w.namespace, w.name);
    }
  }
}

/** After an upgrade: sets the templates of the `update` owners whose selected pods are all at the target. */
async function applyOwnerUpdates(
  cluster: Cluster,
  entries: readonly OwnerEntry[],
  current: (key: string) => V1Pod | undefined,
  plan: Plan,
): Promise<OwnerStepResult> {
  const result: OwnerStepResult = { lines: [], failed: 0, forbidden: false };
  const due = updatesDue(entries, current, plan);
  for (const e of entries.filter((x) => x.action === 'update' && !due.includes(x))) {
    result.lines.push(
      `owner ${e.kind} ${e.namespace}/${e.name}: template left as it was: not all of its ${e.pods.length} selected pods are at the target`,
    );
  }
  for (const e of due) {
    try {
      const w = await patchFresh(cluster, e.workload!, (fresh) => templatePatch(fresh, plan));
      const images = plan.update.containers
        .filter((c) => w?.templateImages[c.name] === c.image)
        .map((c) => `${c.name} ${c.image}`);
      result.lines.push(
        `owner ${e.kind} ${e.namespace}/${e.name}: pod template set to ${images.join(', ')}: pods it recreates run the new image`,
      );
    } catch (err) {
      result.failed++;
      result.forbidden ||= isForbidden(err);
      result.lines.push(
        `error: owner ${e.kind} ${e.namespace}/${e.name}: updating its pod template failed: ${lookupError(err, 'patch', e.workload!.kind, e.namespace).message}`,
      );
    }
  }
  return result;
}

/** After a rollback: puts back the templates this plan set (only containers still at the image it set). */
async function revertOwners(cluster: Cluster, entries: readonly OwnerEntry[], plan: Plan): Promise<OwnerStepResult> {
  const result: OwnerStepResult = { lines: [], failed: 0, forbidden: false };
  for (const e of entries) {
    if (!e.workload) continue;
    const first = revertPatch(e.workload, plan);
    if ('skip' in first) continue;
    try {
      await patchFresh(cluster, e.workload, (fresh) => {
        const r = revertPatch(fresh, plan);
        return 'skip' in r ? undefined : r.patch;
      });
      result.lines.push(
        `owner ${e.kind} ${e.namespace}/${e.name}: pod template put back to ${first.restored.join(', ') || 'what it was (changed by someone else since)'}`,
      );
    } catch (err) {
      result.failed++;
      result.forbidden ||= isForbidden(err);
      result.lines.push(
        `error: owner ${e.kind} ${e.namespace}/${e.name}: putting its pod template back failed: ${lookupError(err, 'patch', e.workload.kind, e.namespace).message}`,
      );
    }
  }
  return result;
}

/**
 * The owners of the pods a run touches and, for an upgrade (`selection` given), the owner patches
 * these credentials may not make. A rollback reverts what it finds: refusing it for an owner's
 * kind would help nobody.
 */
export async function readOwners(
  cluster: Cluster,
  plan: Plan,
  selection: FleetSelection | undefined,
  cached: readonly V1Pod[],
  /** Workload resources whose `get` the permission preflight found missing: not asked for. */
  unreadable: ReadonlySet<string> = new Set(),
): Promise<{ entries: OwnerEntry[]; patchRefusals: string[] }> {
  const pods = selection
    ? selection.selected
    : cached.map((pod) => ({ namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', pod }));
  const entries = await discoverOwners(clusterWorkloadReader(cluster), plan, pods, unreadable);
  if (!selection) return { entries, patchRefusals: [] };
  return { entries, patchRefusals: await updatePermissionProblems(cluster, entries) };
}

/** After the run: owners' templates set (an upgrade that ended 0 or 5) or put back (a rollback). */
export async function keepOwnersInStep(
  cluster: Cluster,
  plan: Plan,
  direction: 'upgrade' | 'rollback',
  entries: readonly OwnerEntry[],
  exitCode: number,
  current: (key: string) => V1Pod | undefined,
): Promise<OwnerStepResult> {
  if (direction === 'rollback') {
    // Only once the pods are back: a template reverted under pods still at the new image would bring replacements back on the old one.
    if (exitCode === ExitCode.OK) return revertOwners(cluster, entries, plan);
    const kept = entries.filter((e) => e.workload && e.workload.annotations[OWNER_STATE_ANNOTATION] !== undefined);
    return {
      lines: kept.map(
        (e) =>
          `owner ${e.kind} ${e.namespace}/${e.name}: template left at the new images: the rollback did not complete`,
      ),
      failed: 0,
      forbidden: false,
    };
  }
  if (exitCode !== ExitCode.OK && exitCode !== ExitCode.NODES_DOWN) {
    const held = entries.filter((e) => e.action === 'update');
    return {
      lines: held.map(
        (e) => `owner ${e.kind} ${e.namespace}/${e.name}: template left as it was: the rollout did not complete`,
      ),
      failed: 0,
      forbidden: false,
    };
  }
  return applyOwnerUpdates(cluster, entries, current, plan);
}
