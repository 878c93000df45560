// The permissions a rollout of a plan needs, namespace by namespace, and which of them only degrade it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rolloutAccessNeeds } from '../../../src/session/accessNeeds.js';
import { accessRefusal, accessWarning } from '../../../src/session/preflight.js';
import { testPlan } from '../helpers/plans.js';

/** A plan over namespaces a and b, with `gates` (spec lines) if any. */
const plan = (gates: string) => testPlan({ name: 'p', namespaces: ['a', 'b'], extra: gates });

test("access needs: pods in every namespace, record and lease in the first, people's decisions read (never written) in the controlNamespace", () => {
  const needs = rolloutAccessNeeds(plan(''));
  const keys = needs.map((n) => `${n.verb} ${n.resource} ${n.namespace ?? '-'}${n.degrades ? ' (optional)' : ''}`);
  assert.ok(keys.includes('patch pods/status b'));
  assert.ok(keys.includes('update leases a') && !keys.includes('update leases b'));
  assert.ok(keys.includes('list nodes - (optional)'));
  const decisions = (p: ReturnType<typeof plan>) =>
    rolloutAccessNeeds(p)
      .filter((n) => n.name === 'kwave-p.control')
      .map((n) => `${n.verb} ${n.resource} ${n.namespace}`);
  assert.deepEqual(decisions(plan('')), ['get configmaps a', 'watch configmaps a']);
  assert.deepEqual(decisions(plan('  controlNamespace: decide\n')), [
    'get configmaps decide',
    'watch configmaps decide',
  ]);
  assert.ok(
    !rolloutAccessNeeds(plan('  controlNamespace: decide\n')).some(
      (n) => n.namespace === 'decide' && n.verb !== 'get' && n.verb !== 'watch',
    ),
  );
});

test('what only an optional feature needs names its own Role in deploy/optional/', () => {
  const refusal = (extra: string) =>
    accessRefusal(rolloutAccessNeeds(plan(extra)).filter((n) => n.grantedBy)).message.split('\n  ');
  assert.deepEqual(
    rolloutAccessNeeds(plan('')).filter((n) => n.grantedBy),
    [],
    'a plan without the features needs no optional Role',
  );
  assert.deepEqual(refusal('  strategy: { waves: ["100%"], prePull: true }\n').slice(0, 2), [
    'forbidden: cannot create pods in namespace a — deploy/optional/pre-pull (Role kwave-pre-pull) grants it (the image pre-pull pods (strategy.prePull))',
    'forbidden: cannot delete pods in namespace a — deploy/optional/pre-pull (Role kwave-pre-pull) grants it (removing the image pre-pull pods (strategy.prePull))',
  ]);
  assert.equal(
    refusal('  owners: update\n')[0],
    "forbidden: cannot patch statefulsets in namespace a — deploy/optional/owners-update (Role kwave-owners-update) grants it (keeping OnDelete owners' pod templates in step (owners: update))",
  );
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
