// The permissions a rollout of a plan needs, namespace by namespace, and which of them only degrade it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rolloutAccessNeeds } from '../../../src/cli/accessNeeds.js';
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
