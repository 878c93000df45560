// What a rollout needs to be allowed to do, as RBAC sees it: one row per (verb, resource,
// namespace), each saying what it is for. Pure: the table is checked against the API server by
// preflight.ts before anything is written, and mirrors deploy/rbac.yaml plus, for what only an
// optional feature needs, the Roles of deploy/optional/ (the RBAC e2e test keeps them in step,
// and its audit-log check proves kwave makes no other request).
//
// To add a permission for a new feature: add a row here (optional, with what degrades, if the
// rollout can go on without it), the rule to deploy/rbac.yaml (or, if only that feature needs it,
// a Role of its own in deploy/optional/, named by `grantedBy`), and a row to the rule-removal
// table (RULE_CASES) of test/e2e/helpers/rbacSuite.ts, which rbac-rules.test.ts runs.
import { controlName, recordName } from '../record/record.js';
import type { Plan } from '../plan/types.js';
import { resizesAny } from '../inplace/changes.js';
import type { KubeVerb } from '../cluster/index.js';

export interface AccessNeed {
  verb: KubeVerb;
  /** API group; "" for core. */
  group: string;
  /** With its subresource, as `pods/status`. */
  resource: string;
  /** Undefined for cluster-scoped resources. */
  namespace?: string;
  /** Set where kwave only ever touches one object (its record and lease): a Role may name it. */
  name?: string;
  /** What kwave does with it, for the refusal message. */
  purpose: string;
  /** When set, the rollout goes on without it, and this says what it loses. */
  degrades?: string;
  /** What grants it when not deploy/rbac.yaml: an optional feature's own Role (deploy/optional/). */
  grantedBy?: string;
}

/** The optional features' Roles: not in the default install, so it can neither delete pods, change workloads nor resize pods. */
export const OPTIONAL_ROLES = {
  prePull: 'deploy/optional/pre-pull (Role kwave-pre-pull)',
  ownersUpdate: 'deploy/optional/owners-update (Role kwave-owners-update)',
  resize: 'deploy/optional/resize (Role kwave-resize)',
} as const;

/** The permissions `kwave run` (and `kwave rollback`) needs for this plan. */
export function rolloutAccessNeeds(plan: Plan): AccessNeed[] {
  const first = plan.target.namespaces[0]!;
  const name = recordName(plan.name);
  const needs: AccessNeed[] = [];
  for (const namespace of plan.target.namespaces) {
    needs.push(
      { verb: 'list', group: '', resource: 'pods', namespace, purpose: "selecting the plan's pods" },
      { verb: 'watch', group: '', resource: 'pods', namespace, purpose: 'following the pods' },
      { verb: 'get', group: '', resource: 'pods', namespace, purpose: 'reading a pod afresh after a conflict' },
      { verb: 'patch', group: '', resource: 'pods', namespace, purpose: 'the image patch' },
      { verb: 'patch', group: '', resource: 'pods/status', namespace, purpose: 'the readiness gate' },
      ...(resizesAny(plan.update.containers)
        ? [
            {
              verb: 'patch' as const,
              group: '',
              resource: 'pods/resize',
              namespace,
              purpose: 'the resize',
              grantedBy: OPTIONAL_ROLES.resize,
            },
          ]
        : []),
      {
        verb: 'create',
        group: '',
        resource: 'events',
        namespace,
        purpose: 'Events on pods that fail or are rolled back',
      },
    );
  }
  needs.push(
    { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: first, name, purpose: 'the run lease' },
    { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: first, purpose: 'the run lease' },
    {
      verb: 'update',
      group: 'coordination.k8s.io',
      resource: 'leases',
      namespace: first,
      name,
      purpose: 'renewing the run lease',
    },
    { verb: 'get', group: '', resource: 'configmaps', namespace: first, name, purpose: 'the rollout record' },
    { verb: 'create', group: '', resource: 'configmaps', namespace: first, purpose: 'the rollout record' },
    { verb: 'update', group: '', resource: 'configmaps', namespace: first, name, purpose: 'the rollout record' },
  );
  // People's decisions (kwave approve, pause, resume, abort): read and followed, never written.
  const decisions = controlName(plan.name);
  const purpose = "people's decisions: kwave approve, pause, resume, abort";
  needs.push(
    { verb: 'get', group: '', resource: 'configmaps', namespace: plan.controlNamespace, name: decisions, purpose },
    { verb: 'watch', group: '', resource: 'configmaps', namespace: plan.controlNamespace, name: decisions, purpose },
  );
  if (plan.strategy.respectPodDisruptionBudgets) {
    const lost = 'PodDisruptionBudgets are not respected';
    for (const namespace of plan.target.namespaces) {
      needs.push(
        {
          verb: 'list',
          group: 'policy',
          resource: 'poddisruptionbudgets',
          namespace,
          purpose: 'the PodDisruptionBudgets a drain must not break',
          degrades: lost,
        },
        {
          verb: 'watch',
          group: 'policy',
          resource: 'poddisruptionbudgets',
          namespace,
          purpose: 'following the PodDisruptionBudgets',
          degrades: lost,
        },
      );
    }
  }
  if (plan.strategy.prePull) {
    for (const namespace of plan.target.namespaces) {
      needs.push(
        {
          verb: 'create',
          group: '',
          resource: 'pods',
          namespace,
          purpose: 'the image pre-pull pods (strategy.prePull)',
          grantedBy: OPTIONAL_ROLES.prePull,
        },
        {
          verb: 'delete',
          group: '',
          resource: 'pods',
          namespace,
          purpose: 'removing the image pre-pull pods (strategy.prePull)',
          grantedBy: OPTIONAL_ROLES.prePull,
        },
      );
    }
  }
  needs.push(...ownerAccessNeeds(plan));
  needs.push(
    {
      verb: 'list',
      group: '',
      resource: 'nodes',
      purpose: 'nodes that cannot act, and zones',
      degrades:
        'pods on nodes that cannot act are not told apart (they time out), and `order: spread-zones` has no zones',
    },
    {
      verb: 'watch',
      group: '',
      resource: 'nodes',
      purpose: 'following nodes',
      degrades: 'pods on nodes that cannot act are not told apart (they time out)',
    },
  );
  return needs;
}

/** The workload kinds a pod's owner can be that kwave reads (a ReplicaSet leads to its Deployment). */
const OWNER_RESOURCES = ['replicasets', 'deployments', 'statefulsets', 'daemonsets'] as const;

/**
 * spec.owners: kwave reads the owner of every selected pod that has one (each owner once), to say
 * whether the pods its controller recreates would run the old image. With `owners: warn` (the
 * default) that is a courtesy: without a kind's `get`, owners of that kind are not read (no
 * request is made) and each is reported as unknown. With `owners: update` it decides what is
 * safe to change, so every `get` is required, and so is `patch` on the two kinds kwave updates.
 */
function ownerAccessNeeds(plan: Plan): AccessNeed[] {
  const update = plan.owners === 'update';
  const needs: AccessNeed[] = [];
  for (const namespace of plan.target.namespaces) {
    for (const resource of OWNER_RESOURCES) {
      needs.push({
        verb: 'get',
        group: 'apps',
        resource,
        namespace,
        purpose: "reading the selected pods' owners (spec.owners)",
        ...(update
          ? {}
          : {
              degrades: `owners that are ${resource} are not read: kwave cannot tell whether the pods they recreate would run the old image`,
            }),
      });
    }
    if (update) {
      for (const resource of ['statefulsets', 'daemonsets'] as const) {
        needs.push({
          verb: 'patch',
          group: 'apps',
          resource,
          namespace,
          purpose: "keeping OnDelete owners' pod templates in step (owners: update)",
          grantedBy: OPTIONAL_ROLES.ownersUpdate,
        });
      }
    }
  }
  return needs;
}
