// Before a rollout writes anything: may kwave's identity do all it will need? Every authenticated
// user may ask about itself. One SelfSubjectRulesReview per namespace, and at once a
// SelfSubjectAccessReview per cluster-scoped need (a namespace's rules include those of its
// RoleBindings, which grant nothing cluster-wide): what the rules grant is allowed. A namespaced
// need the rules do not show (denied, or allowed by an authorizer that cannot list its rules) is
// then asked alone, so a denial is always the server's own answer. A missing rule refuses the run
// up front (exit 2, naming verb, resource and namespace) instead of stopping it half way with
// pods drained. Optional permissions only warn.
import { describeTarget, forbiddenMessage, isForbidden, type Cluster } from '../cluster/index.js';
import { ExitCode, KwaveError } from '../errors.js';
import type { AccessNeed } from './accessNeeds.js';
import { rulesGrant } from './rbacRules.js';
import type { Plan } from '../plan/types.js';
import { controlName } from '../record/record.js';

export interface AccessCheck {
  /** False when the server offers no access reviews (the simulator) or refuses them: nothing was checked. */
  checked: boolean;
  /** Required permissions the identity lacks. */
  denied: AccessNeed[];
  /** Optional permissions it lacks (the rollout goes on without their feature). */
  missingOptional: AccessNeed[];
}

const UNCHECKED: AccessCheck = { checked: false, denied: [], missingOptional: [] };

export async function checkAccess(
  cluster: Pick<Cluster, 'reviewAccess' | 'reviewRules'>,
  needs: AccessNeed[],
): Promise<AccessCheck> {
  let lacking: AccessNeed[];
  try {
    const namespaces = [...new Set(needs.flatMap((n) => (n.namespace === undefined ? [] : [n.namespace])))];
    const clusterWide = needs.filter((n) => n.namespace === undefined);
    const [rules, wideAnswers] = await Promise.all([
      Promise.all(namespaces.map((ns) => cluster.reviewRules(ns))),
      Promise.all(clusterWide.map((n) => cluster.reviewAccess(n))),
    ]);
    if (rules.some((r) => r === undefined) || wideAnswers.some((a) => a === undefined)) return UNCHECKED;
    const rulesOf = new Map(namespaces.map((ns, i) => [ns, rules[i]!.resourceRules]));
    const unshown = needs.filter((n) => n.namespace !== undefined && !rulesGrant(rulesOf.get(n.namespace)!, n));
    const answers = await Promise.all(unshown.map((n) => cluster.reviewAccess(n)));
    if (answers.some((a) => a === undefined)) return UNCHECKED;
    lacking = [
      ...clusterWide.filter((_, i) => !wideAnswers[i]!.allowed),
      ...unshown.filter((_, i) => !answers[i]!.allowed),
    ];
  } catch (err) {
    // Access reviews forbidden too (a cluster without system:basic-user): the run finds out per request.
    if (isForbidden(err)) return UNCHECKED;
    throw err;
  }
  const denied = new Set(lacking);
  // In the order of the needs, as the refusal names them.
  const inOrder = needs.filter((n) => denied.has(n));
  return {
    checked: true,
    denied: inOrder.filter((n) => !n.degrades),
    missingOptional: inOrder.filter((n) => n.degrades),
  };
}

/** The refusal for missing required permissions: one line per permission. */
export function accessRefusal(denied: AccessNeed[]): KwaveError {
  const lines = denied.map((n) => `${forbiddenMessage(n, n.grantedBy)} (${n.purpose})`);
  return new KwaveError('KUBE', lines.join('\n  '), ExitCode.BAD_INPUT);
}

/** `warning: cannot list nodes (cluster-wide) — …: pods on nodes …`. */
export function accessWarning(need: AccessNeed): string {
  return `warning: cannot ${describeTarget(need)} (${need.purpose}), so ${need.degrades}; ${need.grantedBy ?? 'deploy/rbac.yaml'} grants it`;
}

/**
 * A plan whose `controlNamespace` is not its record's asks that the runner may not make people's
 * decisions. When this identity could write the decisions ConfigMap there anyway (create, or
 * update it), the warning that says so; undefined when it cannot, or nothing could be checked.
 */
export async function selfDecisionWarning(
  cluster: Pick<Cluster, 'reviewAccess'>,
  plan: Plan,
): Promise<string | undefined> {
  const namespace = plan.controlNamespace;
  if (namespace === plan.target.namespaces[0]) return undefined;
  const name = controlName(plan.name);
  const asks = [
    { verb: 'create', group: '', resource: 'configmaps', namespace },
    { verb: 'update', group: '', resource: 'configmaps', namespace, name },
  ] as const;
  const answers = await Promise.all(asks.map((a) => cluster.reviewAccess(a).catch(() => undefined)));
  const may = asks.filter((_, i) => answers[i]?.allowed === true);
  if (may.length === 0) return undefined;
  return `warning: this run's identity may ${may.map((a) => a.verb).join(' and ')} configmaps in namespace ${namespace}, where people's decisions (${name}) live: it could approve, pause, resume or abort its own rollout; give it only get and watch there (deploy/rbac.yaml)`;
}
