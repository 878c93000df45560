// The permissions a rollout of a plan needs, namespace by namespace, and which of them only degrade it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rolloutAccessNeeds } from '../../../src/session/accessNeeds.js';
import { accessWarning } from '../../../src/session/preflight.js';
import { testPlan } from '../helpers/plans.js';

/** A plan over namespaces a and b, with `gates` (spec lines) if any. */
const plan = (gates: string) => testPlan({ name: 'p', namespaces: ['a', 'b'], extra: gates });

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

test('access needs for spec.owners: get on the four owner kinds, optional with owners: warn; required, with patch on StatefulSets and DaemonSets, with owners: update', () => {
  const key = (n: { verb: string; resource: string; namespace?: string; degrades?: string }) =>
    `${n.verb} ${n.resource} ${n.namespace}${n.degrades ? ' (optional)' : ''}`;
  const kinds = ['replicasets', 'deployments', 'statefulsets', 'daemonsets'];
  const warn = rolloutAccessNeeds(plan(''))
    .filter((n) => n.group === 'apps')
    .map(key);
  assert.deepEqual(warn, [...kinds.map((r) => `get ${r} a (optional)`), ...kinds.map((r) => `get ${r} b (optional)`)]);
  const update = rolloutAccessNeeds(plan('  owners: update\n'))
    .filter((n) => n.group === 'apps')
    .map(key);
  assert.deepEqual(
    update.filter((k) => k.endsWith(' a')),
    [
      'get replicasets a',
      'get deployments a',
      'get statefulsets a',
      'get daemonsets a',
      'patch statefulsets a',
      'patch daemonsets a',
    ],
  );
  assert.equal(update.length, 12, 'in every target namespace');
  const optional = rolloutAccessNeeds(plan('')).find((n) => n.resource === 'statefulsets')!;
  assert.equal(
    accessWarning(optional),
    "warning: cannot get statefulsets in namespace a (reading the selected pods' owners (spec.owners)), so owners that are statefulsets are not read: kwave cannot tell whether the pods they recreate would run the old image; deploy/rbac.yaml grants it",
  );
});
