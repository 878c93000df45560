// The decisions a person makes about a running rollout, from any machine: an approval of a wave
// (`kwave approve`) and a pause, resume or abort request (`kwave pause | resume | abort`). They go
// to the plan's decisions ConfigMap (`kwave-<plan>.control` in its `controlNamespace`), which the
// runner only reads, so where RBAC lets the runner's identity read it and nothing more, the runner
// cannot decide for itself. The CLI commands and `kwave dashboard` both call these, so the same
// request is the same write, under the caller's own credentials. Reads the record and the plan's
// Lease; KubeErrors (a 403 included) leave as the API server gave them.
import { hostname } from 'node:os';
import type { Cluster } from '../cluster/cluster.js';
import { KubeError } from '../cluster/kubeError.js';
import { readLease } from '../lease/leaseView.js';
import { currentUser } from '../lease/runnerIdentity.js';
import { approvalKey, decodeApprovals, decodeRecord, encodeApproval } from '../record/codec.js';
import { requestControl, type ControlAction, type ControlDecision, type ControlRequest } from '../record/control.js';
import { updateDecisions, writeControl, type DecisionsApi } from '../record/controlStore.js';
import { recordName, type Approval } from '../record/record.js';

/** Who decides: `by` for people (`kwave-admin (alice@laptop)`), `user` the API server's own name for the caller. */
export interface Asker {
  by: string;
  user?: string;
}

/** `alice@laptop`: the person at the keyboard, where the request was made. */
function localAsker(env: NodeJS.ProcessEnv): string {
  return `${currentUser(env)}@${hostname()}`;
}

/**
 * The API server's name for the caller (SelfSubjectReview) where it tells, with where the request
 * was made: `{by: "kwave-admin (alice@laptop)", user: "kwave-admin"}`.
 */
export async function whoIsAsking(cluster: Pick<Cluster, 'whoAmI'>, env: NodeJS.ProcessEnv): Promise<Asker> {
  const local = localAsker(env);
  let user: string | undefined;
  try {
    user = await cluster.whoAmI();
  } catch {
    // A server without the review (before 1.28) still takes the decision; RBAC decides who may write it.
    user = undefined;
  }
  return user ? { by: `${user} (${local})`, user } : { by: local };
}

/** Where a rollout's record and its decisions are. */
export interface RolloutPlace {
  /** The record's namespace. */
  namespace: string;
  /** The decisions ConfigMap's namespace (the plan's `controlNamespace`). */
  controlNamespace: string;
  plan: string;
}

export type ControlOutcome =
  { kind: 'not-run' } | { kind: 'decided'; decision: ControlDecision; request: ControlRequest; runner?: string };

/**
 * Writes a pause, resume or abort request (record/control.ts decides, record/controlStore.ts
 * writes with a guarded update). `revision`: the plan revision the request is given for.
 */
export async function askControl(
  cluster: DecisionsApi & Pick<Cluster, 'getLease'>,
  input: RolloutPlace & { revision: string; action: ControlAction; asker: Asker },
): Promise<ControlOutcome> {
  const { namespace, plan } = input;
  let cm;
  try {
    cm = await cluster.getConfigMap(namespace, recordName(plan));
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return { kind: 'not-run' };
    throw err;
  }
  const record = decodeRecord(cm);
  const direction = record.ok ? record.record.direction : undefined;
  const { by, user } = input.asker;
  const request: ControlRequest = {
    action: input.action,
    by,
    ...(user ? { user } : {}),
    at: new Date().toISOString(),
    revision: input.revision,
  };
  let runner: string | undefined;
  const { decision } = await writeControl(cluster, input.controlNamespace, plan, async (state) => {
    // Read per attempt: after a 409 the runner may have come or gone.
    const lease = await readLease(cluster, namespace, plan, new Date());
    runner = lease && !lease.free ? lease.holder : undefined;
    return requestControl(state, request, { ...(runner ? { runner } : {}), ...(direction ? { direction } : {}) });
  });
  return { kind: 'decided', decision, request, ...(runner ? { runner } : {}) };
}

export type ApprovalOutcome =
  | { kind: 'not-run' }
  /** Which wave waits cannot be told: `why`. */
  | { kind: 'refused'; why: string }
  | { kind: 'approved'; wave: number; approval: Approval; already: boolean };

/**
 * Approves wave `wave` of `plan` (default: the wave the record says waits for an approval): the
 * key `approval.wave-N` = {"by", "user", "at", "revision"} of the decisions ConfigMap. An approval
 * already given for the revision is reported, not written again. `revision`: the one approved
 * when the record cannot tell (a damaged record).
 */
export async function approveWave(
  cluster: DecisionsApi,
  input: RolloutPlace & { wave?: number; asker: Asker; revision: string },
): Promise<ApprovalOutcome> {
  const { namespace, plan } = input;
  const name = recordName(plan);
  let cm;
  try {
    cm = await cluster.getConfigMap(namespace, name);
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return { kind: 'not-run' };
    throw err;
  }
  const decoded = decodeRecord(cm);
  const record = decoded.ok ? decoded.record : undefined;
  let wave = input.wave;
  if (wave === undefined) {
    if (!record)
      return {
        kind: 'refused',
        why: `cannot tell which wave waits: the rollout record ${namespace}/${name} is damaged (${decoded.ok ? '' : decoded.problem}); pass --wave N`,
      };
    if (record.waiting?.kind !== 'approval') {
      const where = record.wave === 0 ? 'before its first wave' : `wave ${record.wave} of ${record.waves}`;
      return {
        kind: 'refused',
        why: `no wave of plan ${plan} is waiting for approval (phase ${record.phase}, ${where}); pass --wave N to approve a wave ahead of time`,
      };
    }
    wave = record.waiting.wave;
  } else if (record && record.waves > 0 && wave > record.waves) {
    return { kind: 'refused', why: `plan ${plan} has ${record.waves} waves; there is no wave ${wave} to approve` };
  }
  const revision = record?.revision ?? input.revision;
  const { by, user } = input.asker;
  const approval: Approval = { by, ...(user ? { user } : {}), at: new Date().toISOString(), revision };
  const approved = wave;
  let existing: Approval | undefined;
  await updateDecisions(cluster, input.controlNamespace, plan, async (data) => {
    existing = decodeApprovals(data)[approved];
    if (existing && (existing.revision === undefined || existing.revision === revision)) return undefined;
    existing = undefined;
    return { ...data, [approvalKey(approved)]: encodeApproval(approval) };
  });
  return existing
    ? { kind: 'approved', wave, approval: existing, already: true }
    : { kind: 'approved', wave, approval, already: false };
}
