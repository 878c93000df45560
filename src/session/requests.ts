// The writes a person makes to a running rollout, from any machine, through its rollout record:
// an approval of a wave (`kwave approve`) and a pause, resume or abort request (`kwave pause |
// resume | abort`). The CLI commands and `kwave dashboard` both call these, so the same request
// is the same write, under the caller's own credentials. Touches the record ConfigMap and reads
// the plan's Lease; KubeErrors (a 403 included) leave as the API server gave them.
import { hostname } from 'node:os';
import type { Cluster } from '../cluster/cluster.js';
import { KubeError } from '../cluster/kubeError.js';
import { readLease } from '../lease/leaseView.js';
import { currentUser } from '../lease/runnerIdentity.js';
import { approvalKey, decodeApprovals, decodeRecord, encodeApproval } from '../record/codec.js';
import { requestControl, type ControlAction, type ControlDecision, type ControlRequest } from '../record/control.js';
import { writeControl } from '../record/controlStore.js';
import { recordName, type Approval } from '../record/record.js';

/** `alice@laptop`: the person at the keyboard, where the request was made. */
export function localAsker(env: NodeJS.ProcessEnv): string {
  return `${currentUser(env)}@${hostname()}`;
}

/** `kwave-admin (alice@laptop)`: the cluster's name for the caller where it tells, and where the request was made. */
export async function whoIsAsking(cluster: Pick<Cluster, 'whoAmI'>, env: NodeJS.ProcessEnv): Promise<string> {
  const local = localAsker(env);
  let user: string | undefined;
  try {
    user = await cluster.whoAmI();
  } catch {
    // Who we are is a courtesy for the history; the request itself must still go through.
    user = undefined;
  }
  return user ? `${user} (${local})` : local;
}

export type ControlOutcome =
  { kind: 'not-run' } | { kind: 'decided'; decision: ControlDecision; request: ControlRequest; runner?: string };

/**
 * Writes a pause, resume or abort request into the record of `plan` in `namespace`
 * (record/control.ts decides, record/controlStore.ts writes with a guarded update).
 * `revision`: the plan revision the request is given for.
 */
export async function askControl(
  cluster: Pick<Cluster, 'getConfigMap' | 'updateConfigMap' | 'getLease'>,
  input: { namespace: string; plan: string; revision: string; action: ControlAction; by: string },
): Promise<ControlOutcome> {
  const { namespace, plan } = input;
  const request: ControlRequest = {
    action: input.action,
    by: input.by,
    at: new Date().toISOString(),
    revision: input.revision,
  };
  let runner: string | undefined;
  const outcome = await writeControl(cluster, namespace, plan, async (state, cm) => {
    // Read per attempt: after a 409 the runner may have come or gone.
    const lease = await readLease(cluster, namespace, plan, new Date());
    runner = lease && !lease.free ? lease.holder : undefined;
    const record = decodeRecord(cm);
    const direction = record.ok ? record.record.direction : undefined;
    return requestControl(state, request, { ...(runner ? { runner } : {}), ...(direction ? { direction } : {}) });
  });
  if (outcome.kind === 'not-run') return outcome;
  return { kind: 'decided', decision: outcome.decision, request, ...(runner ? { runner } : {}) };
}

export type ApprovalOutcome =
  | { kind: 'not-run' }
  /** Which wave waits cannot be told: `why`. */
  | { kind: 'refused'; why: string }
  | { kind: 'approved'; wave: number; approval: Approval; already: boolean };

/**
 * Approves wave `wave` of `plan` (default: the wave the record says waits for an approval): the
 * key `approval.wave-N` = {"by", "at", "revision"}, written with a JSON merge patch of that one
 * key, so it never conflicts with the runner's writes. An approval already given for the
 * revision is reported, not written again. `revision`: the one approved when the record cannot
 * tell (a damaged record).
 */
export async function approveWave(
  cluster: Pick<Cluster, 'getConfigMap' | 'patchConfigMap'>,
  input: { namespace: string; plan: string; wave?: number; by: string; revision: string },
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
  const existing = decodeApprovals(cm.data ?? {})[wave];
  if (existing && (existing.revision === undefined || existing.revision === revision))
    return { kind: 'approved', wave, approval: existing, already: true };
  const approval: Approval = { by: input.by, at: new Date().toISOString(), revision };
  try {
    await cluster.patchConfigMap(namespace, name, { data: { [approvalKey(wave)]: encodeApproval(approval) } });
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return { kind: 'not-run' };
    throw err;
  }
  return { kind: 'approved', wave, approval, already: false };
}
