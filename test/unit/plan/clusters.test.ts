// spec.clusters and spec.clusterOrder: loaded in order with the default order, refused with the
// line of the mistake, and kept out of the revision (a plan without them keeps the revision it had).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPlanText } from '../../../src/plan/load.js';
import type { Plan } from '../../../src/plan/types.js';
import { MINIMAL_PLAN as MINIMAL } from './texts.js';

/** MINIMAL's revision on main before spec.clusters existed (also pinned in normalize.test.ts). */
const MINIMAL_REVISION = '0237619567';

const TWO = `  clusters:
    - { name: eu-1, context: kind-eu }
    - { name: us-1, context: kind-us }
`;

function load(text: string): Plan {
  const r = loadPlanText(text, 'plan.yaml');
  if (!r.ok) assert.fail(JSON.stringify(r.errors, null, 1));
  return r.plan;
}

function errorsOf(text: string): { line: number; col: number; message: string }[] {
  const r = loadPlanText(text, 'plan.yaml');
  assert.equal(r.ok, false, 'expected the plan to be refused');
  return r.ok ? [] : r.errors.map((e) => ({ line: e.pos.line, col: e.pos.col, message: e.message }));
}

describe('spec.clusters', () => {
  test('a plan without clusters has none, and keeps the revision it had before the field existed', () => {
    const plan = load(MINIMAL);
    assert.equal(plan.clusters, undefined);
    assert.equal(plan.revision, MINIMAL_REVISION);
  });

  test('loads the clusters in the listed order, sequential by default', () => {
    const plan = load(MINIMAL + TWO);
    assert.deepEqual(plan.clusters, {
      list: [
        { name: 'eu-1', context: 'kind-eu' },
        { name: 'us-1', context: 'kind-us' },
      ],
      order: 'sequential',
    });
    assert.equal(load(MINIMAL + TWO + '  clusterOrder: interleaved\n').clusters?.order, 'interleaved');
  });

  test('clusters and their order are outside the revision: pods done stay done when a cluster is added', () => {
    assert.equal(load(MINIMAL + TWO).revision, MINIMAL_REVISION);
    assert.equal(load(MINIMAL + TWO + '  clusterOrder: interleaved\n').revision, MINIMAL_REVISION);
    assert.equal(load(MINIMAL + TWO + '    - { name: ap-1, context: kind-ap }\n').revision, MINIMAL_REVISION);
  });

  test('a name given twice is refused at the second one', () => {
    const errors = errorsOf(MINIMAL + TWO.replace('name: us-1', 'name: eu-1'));
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.equal(errors[0]!.line, 14);
    assert.match(errors[0]!.message, /each cluster name once, found "eu-1" again \(also clusters\[0\]\)/);
  });

  test('a context given twice (one cluster run twice) is refused', () => {
    const errors = errorsOf(MINIMAL + TWO.replace('context: kind-us', 'context: kind-eu'));
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.match(errors[0]!.message, /each cluster context once, found "kind-eu" again/);
  });

  test('the schema refuses a bad name, a missing context, an empty list, an unknown order', () => {
    assert.match(errorsOf(MINIMAL + TWO.replace('name: eu-1', 'name: EU_1'))[0]!.message, /DNS-1123/);
    assert.match(errorsOf(MINIMAL + '  clusters: [{ name: eu-1 }]\n')[0]!.message, /context/);
    assert.ok(errorsOf(MINIMAL + '  clusters: []\n').length > 0);
    assert.ok(
      errorsOf(MINIMAL + TWO + '  clusterOrder: parallel\n').some((e) => /sequential|interleaved/.test(e.message)),
    );
  });

  test('clusterOrder without clusters is refused at its key', () => {
    const errors = errorsOf(MINIMAL + '  clusterOrder: interleaved\n');
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.deepEqual([errors[0]!.line, errors[0]!.col], [12, 3]);
    assert.match(errors[0]!.message, /spec\.clusters beside clusterOrder/);
  });
});
