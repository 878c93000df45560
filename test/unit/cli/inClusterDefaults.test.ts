import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inClusterDefaults } from '../../../src/cli/inClusterDefaults.js';
import { rolloutAccessNeeds } from '../../../src/cli/accessNeeds.js';
import { accessRefusal, accessWarning, checkAccess } from '../../../src/cli/preflight.js';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { loadPlanText } from '../../../src/plan/load.js';

const base = { inCluster: true, stdoutIsTTY: false, outputGiven: false, metricsAddressGiven: false };

test('in a pod: JSON lines on a piped stdout and metrics on every interface', () => {
  assert.deepEqual(inClusterDefaults(base), { output: 'json', metricsAddress: '0.0.0.0:9464' });
});
test('flags win; a TTY keeps text; outside a pod nothing changes', () => {
  assert.deepEqual(inClusterDefaults({ ...base, outputGiven: true, metricsAddressGiven: true }), {});
  assert.deepEqual(inClusterDefaults({ ...base, stdoutIsTTY: true }), { metricsAddress: '0.0.0.0:9464' });
  assert.deepEqual(inClusterDefaults({ ...base, inCluster: false }), {});
});

const plan = (gates: string) => {
  const loaded = loadPlanText(
    `apiVersion: kwave.dev/v1alpha1\nkind: RolloutPlan\nmetadata: { name: p }\nspec:\n  target: { namespaces: [a, b], selector: { matchLabels: { app: x } } }\n  update: { containers: [{ name: c, image: "nginx:1" }] }\n${gates}`,
    'p.yaml',
  );
  assert.ok(loaded.ok);
  return loaded.plan;
};

test('access needs: pods in every namespace, record and lease in the first, watch configmaps only with an approval gate', () => {
  const needs = rolloutAccessNeeds(plan(''));
  const keys = needs.map((n) => `${n.verb} ${n.resource} ${n.namespace ?? '-'}${n.degrades ? ' (optional)' : ''}`);
  assert.ok(keys.includes('patch pods/status b'));
  assert.ok(keys.includes('update leases a') && !keys.includes('update leases b'));
  assert.ok(keys.includes('list nodes - (optional)'));
  assert.ok(!keys.some((k) => k.startsWith('watch configmaps')));
  const withApproval = rolloutAccessNeeds(plan('  gates: [{ name: ok, approval: true }]\n'));
  assert.ok(withApproval.some((n) => n.verb === 'watch' && n.resource === 'configmaps' && n.name === 'kwave-p'));
});

test('checkAccess: denied required and optional apart; no review API or a refused review checks nothing', async () => {
  const needs = rolloutAccessNeeds(plan(''));
  const deny = (f: (n: { verb: string; resource: string }) => boolean) => ({ reviewAccess: async (n: { verb: string; resource: string }) => ({ allowed: !f(n), reason: '' }) });
  const r = await checkAccess(deny((n) => n.resource === 'pods/status' || n.resource === 'nodes'), needs);
  assert.equal(r.checked, true);
  assert.deepEqual(r.denied.map((n) => `${n.verb} ${n.resource} ${n.namespace}`), ['patch pods/status a', 'patch pods/status b']);
  assert.deepEqual(r.missingOptional.map((n) => `${n.verb} ${n.resource}`), ['list nodes', 'watch nodes']);
  assert.equal(accessRefusal(r.denied).exitCode, 2);
  assert.equal(accessRefusal(r.denied).message.split('\n')[0], 'forbidden: cannot patch pods/status in namespace a — deploy/rbac.yaml grants it (the readiness gate)');
  assert.match(accessWarning(r.missingOptional[0]!), /^warning: cannot list nodes \(cluster-wide\) .*spread-zones/);
  let asked = 0;
  assert.equal((await checkAccess({ reviewAccess: async () => void asked++ }, needs)).checked, false);
  assert.equal(asked, 1, 'without the review API, one request, not one per permission');
  assert.equal((await checkAccess({ reviewAccess: async () => { throw new KubeError(403, 'Forbidden', 'no'); } }, needs)).checked, false);
});
