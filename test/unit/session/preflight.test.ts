// The permission preflight: the rules of each namespace (SelfSubjectRulesReview), each need they
// do not show and each cluster-wide one asked of the API server (SelfSubjectAccessReview), the
// denied required ones refused with what grants them, the optional ones warned about.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rolloutAccessNeeds } from '../../../src/session/accessNeeds.js';
import { accessRefusal, accessWarning, checkAccess, selfDecisionWarning } from '../../../src/session/preflight.js';
import { rulesGrant } from '../../../src/session/rbacRules.js';
import type { ResourceRule } from '../../../src/cluster/requestShapes.js';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { testPlan } from '../helpers/plans.js';

/** A plan over namespaces a and b, with `gates` (spec lines) if any. */
const plan = (gates: string) => testPlan({ name: 'p', namespaces: ['a', 'b'], extra: gates });

test('checkAccess: denied required and optional apart; no review API or a refused review checks nothing', async () => {
  const needs = rolloutAccessNeeds(plan(''));
  // Rules that show nothing: every need is asked alone.
  const deny = (f: (n: { verb: string; resource: string }) => boolean) => ({
    reviewRules: async () => ({ resourceRules: [], incomplete: false }),
    reviewAccess: async (n: { verb: string; resource: string }) => ({ allowed: !f(n), reason: '' }),
  });
  const r = await checkAccess(
    deny((n) => n.resource === 'pods/status' || n.resource === 'nodes'),
    needs,
  );
  assert.equal(r.checked, true);
  assert.deepEqual(
    r.denied.map((n) => `${n.verb} ${n.resource} ${n.namespace}`),
    ['patch pods/status a', 'patch pods/status b'],
  );
  assert.deepEqual(
    r.missingOptional.map((n) => `${n.verb} ${n.resource}`),
    ['list nodes', 'watch nodes'],
  );
  assert.equal(accessRefusal(r.denied).exitCode, 2);
  assert.equal(
    accessRefusal(r.denied).message.split('\n')[0],
    'forbidden: cannot patch pods/status in namespace a — deploy/rbac.yaml grants it (the readiness gate)',
  );
  assert.match(accessWarning(r.missingOptional[0]!), /^warning: cannot list nodes \(cluster-wide\) .*spread-zones/);
  let asked = 0;
  const none = async () => void asked++;
  assert.equal((await checkAccess({ reviewRules: none, reviewAccess: none }, needs)).checked, false);
  assert.equal(asked, 4, 'without the review APIs, one round (a rules review per namespace, the cluster-wide needs)');
  assert.equal(
    (
      await checkAccess(
        {
          reviewRules: async () => ({ resourceRules: [], incomplete: false }),
          reviewAccess: async () => {
            throw new KubeError(403, 'Forbidden', 'no');
          },
        },
        needs,
      )
    ).checked,
    false,
  );
});

test("checkAccess: what the namespaces' rules grant is not asked again; the cluster-wide needs always are", async () => {
  const needs = rolloutAccessNeeds(plan(''));
  const asked: string[] = [];
  const everything: ResourceRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];
  const r = await checkAccess(
    {
      // Namespace b's rules lack pods/status: asked alone there, and denied by the server.
      reviewRules: async (ns: string) => ({
        resourceRules:
          ns === 'a'
            ? everything
            : [
                {
                  verbs: ['*'],
                  apiGroups: ['*'],
                  resources: [
                    'pods',
                    'events',
                    'configmaps',
                    'leases',
                    'poddisruptionbudgets',
                    'replicasets',
                    'deployments',
                    'statefulsets',
                    'daemonsets',
                  ],
                },
              ],
        incomplete: false,
      }),
      reviewAccess: async (n) => {
        asked.push(`${n.verb} ${n.resource} ${n.namespace ?? '-'}`);
        return { allowed: n.resource !== 'pods/status', reason: '' };
      },
    },
    needs,
  );
  assert.deepEqual(asked.sort(), ['list nodes -', 'patch pods/status b', 'watch nodes -']);
  assert.deepEqual(
    r.denied.map((n) => `${n.verb} ${n.resource} ${n.namespace}`),
    ['patch pods/status b'],
  );
});

test("rulesGrant: RBAC's matching of verb, group, resource, subresource and names", () => {
  const need = (verb: string, resource: string, o: { group?: string; name?: string } = {}) =>
    ({ verb, group: o.group ?? '', resource, purpose: '', ...(o.name ? { name: o.name } : {}) }) as Parameters<
      typeof rulesGrant
    >[1];
  const rule = (r: Partial<ResourceRule>): ResourceRule[] => [
    { verbs: ['patch'], apiGroups: [''], resources: ['pods'], ...r },
  ];
  assert.equal(rulesGrant(rule({}), need('patch', 'pods')), true);
  assert.equal(rulesGrant(rule({}), need('get', 'pods')), false);
  assert.equal(rulesGrant(rule({}), need('patch', 'pods/status')), false, 'a resource does not cover its subresources');
  assert.equal(rulesGrant(rule({ resources: ['*/status'] }), need('patch', 'pods/status')), true);
  assert.equal(rulesGrant(rule({ resources: ['*'] }), need('patch', 'pods/status')), true);
  assert.equal(rulesGrant(rule({}), need('patch', 'pods', { group: 'apps' })), false);
  assert.equal(rulesGrant(rule({ apiGroups: ['*'], verbs: ['*'] }), need('delete', 'pods', { group: 'x' })), true);
  const named = rule({ verbs: ['get', 'update'], resources: ['configmaps'], resourceNames: ['kwave-p'] });
  assert.equal(rulesGrant(named, need('get', 'configmaps', { name: 'kwave-p' })), true);
  assert.equal(rulesGrant(named, need('get', 'configmaps', { name: 'other' })), false);
  assert.equal(rulesGrant(named, need('update', 'configmaps')), false, 'a named rule grants no unnamed request');
  assert.equal(rulesGrant([], need('patch', 'pods')), false);
});

test("selfDecisionWarning: a plan that keeps people's decisions apart is warned about when the runner could write them anyway", async () => {
  const may = (allowed: (n: { verb: string; namespace?: string }) => boolean) => ({
    reviewAccess: async (n: { verb: string; namespace?: string }) => ({ allowed: allowed(n), reason: '' }),
  });
  const apart = plan('  controlNamespace: decide\n');
  assert.equal(
    await selfDecisionWarning(
      may(() => false),
      apart,
    ),
    undefined,
    'read-only there: separated',
  );
  assert.equal(
    await selfDecisionWarning(
      may(() => true),
      plan(''),
    ),
    undefined,
    'decisions beside the record: no separation was asked for',
  );
  assert.equal(
    await selfDecisionWarning(
      may((n) => n.verb === 'create' && n.namespace === 'decide'),
      apart,
    ),
    "warning: this run's identity may create configmaps in namespace decide, where people's decisions (kwave-p.control) live: it could approve, pause, resume or abort its own rollout; give it only get and watch there (deploy/rbac.yaml)",
  );
});
