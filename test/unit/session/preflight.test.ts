// The permission preflight: each need asked of the API server (SelfSubjectAccessReview), the
// denied required ones refused with what grants them, the optional ones warned about.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rolloutAccessNeeds } from '../../../src/session/accessNeeds.js';
import { accessRefusal, accessWarning, checkAccess, selfDecisionWarning } from '../../../src/session/preflight.js';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { testPlan } from '../helpers/plans.js';

/** A plan over namespaces a and b, with `gates` (spec lines) if any. */
const plan = (gates: string) => testPlan({ name: 'p', namespaces: ['a', 'b'], extra: gates });

test('checkAccess: denied required and optional apart; no review API or a refused review checks nothing', async () => {
  const needs = rolloutAccessNeeds(plan(''));
  const deny = (f: (n: { verb: string; resource: string }) => boolean) => ({
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
  assert.equal((await checkAccess({ reviewAccess: async () => void asked++ }, needs)).checked, false);
  assert.equal(asked, 1, 'without the review API, one request, not one per permission');
  assert.equal(
    (
      await checkAccess(
        {
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
