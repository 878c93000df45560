// Before a rollout writes anything: may kwave's identity do all it will need? One
// SelfSubjectAccessReview per permission (every authenticated user may ask about itself), so a
// missing rule refuses the run up front (exit 2, naming verb, resource and namespace) instead of
// stopping it half way with pods drained. Optional permissions only warn.
import { describeTarget, forbiddenMessage, isForbidden, type Cluster } from '../cluster/index.js';
import { ExitCode, KwaveError } from '../errors.js';
import type { AccessNeed } from './accessNeeds.js';

export interface AccessCheck {
  /** False when the server offers no access reviews (the simulator) or refuses them: nothing was checked. */
  checked: boolean;
  /** Required permissions the identity lacks. */
  denied: AccessNeed[];
  /** Optional permissions it lacks (the rollout goes on without their feature). */
  missingOptional: AccessNeed[];
}

export async function checkAccess(cluster: Pick<Cluster, 'reviewAccess'>, needs: AccessNeed[]): Promise<AccessCheck> {
  let answers;
  try {
    // The first alone: a server without the review API costs one request, not one per permission.
    const first = needs.length > 0 ? await cluster.reviewAccess(needs[0]!) : undefined;
    if (first === undefined) return { checked: false, denied: [], missingOptional: [] };
    answers = [first, ...(await Promise.all(needs.slice(1).map((n) => cluster.reviewAccess(n))))];
  } catch (err) {
    // Access reviews forbidden too (a cluster without system:basic-user): the run finds out per request.
    if (isForbidden(err)) return { checked: false, denied: [], missingOptional: [] };
    throw err;
  }
  if (answers.some((a) => a === undefined)) return { checked: false, denied: [], missingOptional: [] };
  const lacking = needs.filter((_, i) => !answers[i]!.allowed);
  return {
    checked: true,
    denied: lacking.filter((n) => !n.degrades),
    missingOptional: lacking.filter((n) => n.degrades),
  };
}

/** The refusal for missing required permissions: one line per permission. */
export function accessRefusal(denied: AccessNeed[]): KwaveError {
  const lines = denied.map((n) => `${forbiddenMessage(n)} (${n.purpose})`);
  return new KwaveError('KUBE', lines.join('\n  '), ExitCode.BAD_INPUT);
}

/** `warning: cannot list nodes (cluster-wide) — …: pods on nodes …`. */
export function accessWarning(need: AccessNeed): string {
  return `warning: cannot ${describeTarget(need)} (${need.purpose}), so ${need.degrades}; deploy/rbac.yaml grants it`;
}
