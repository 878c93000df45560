// The PodDisruptionBudget arithmetic kwave applies before draining a pod: the disruption
// controller's rounding and counting, kwave's in-flight pods counted as disrupted, the
// controller's status as a second opinion, and the stalls `kwave plan` reports.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { pdbArithmetic, pdbBlocker, pdbSelects, pdbStalls, scaledUp } from '../../../src/rollout/disruptionBudget.js';
import { makePod } from '../inplace/fixtures.js';

function pods(
  n: number,
  options: { notReady?: number[]; app?: string; prefix?: string; namespace?: string } = {},
): V1Pod[] {
  return Array.from({ length: n }, (_, i) => {
    const p = makePod({
      name: `${options.prefix ?? 'web'}-${i}`,
      namespace: options.namespace ?? 'web',
      ready: !(options.notReady ?? []).includes(i),
    });
    p.metadata!.labels = { app: options.app ?? 'web' };
    return p;
  });
}

function pdb(
  spec: Partial<V1PodDisruptionBudget['spec']> & object,
  extra: Partial<V1PodDisruptionBudget> = {},
): V1PodDisruptionBudget {
  return {
    metadata: { name: 'web-pdb', namespace: 'web', generation: 1 },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    ...extra,
  };
}

const keys = (...names: string[]) => new Set(names.map((n) => `web/${n}`));

describe('scaledUp: percentages round up, as the disruption controller scales them', () => {
  for (const [value, total, want] of [
    ['10%', 5, 1],
    ['10%', 10, 1],
    ['10%', 11, 2],
    ['50%', 5, 3],
    ['100%', 7, 7],
    ['0%', 7, 0],
    [3, 100, 3],
  ] as const) {
    test(`${value} of ${total} = ${want}`, () => assert.equal(scaledUp(value, total), want));
  }
});

describe('pdbArithmetic', () => {
  test('maxUnavailable 1 over 10 Ready pods: 10 expected, 9 must stay healthy', () => {
    const a = pdbArithmetic(pdb({ maxUnavailable: 1 }), pods(10));
    assert.deepEqual([a.selected.length, a.expected, a.desiredHealthy, a.healthy.length], [10, 10, 9, 10]);
  });
  test('minAvailable "50%" of 5 rounds up to 3; a not-Ready or terminating pod is not healthy', () => {
    const ps = pods(5, { notReady: [0] });
    ps[1]!.metadata!.deletionTimestamp = new Date();
    const a = pdbArithmetic(pdb({ minAvailable: '50%' }), ps);
    assert.deepEqual([a.expected, a.desiredHealthy, a.healthy.length], [5, 3, 3]);
  });
  test("a maintained status's expectedPods (the owners' scale) counts a replica missing right now", () => {
    const status = {
      observedGeneration: 1,
      expectedPods: 10,
      disruptionsAllowed: 0,
      currentHealthy: 9,
      desiredHealthy: 9,
    };
    const a = pdbArithmetic(pdb({ maxUnavailable: 1 }, { status }), pods(9));
    assert.deepEqual([a.expected, a.desiredHealthy], [10, 9]);
  });
  test('selects only pods of its namespace matching its selector; none without a selector', () => {
    const other = pods(2, { namespace: 'shop' });
    const db = pods(2, { app: 'db', prefix: 'db' });
    assert.equal(pdbArithmetic(pdb({ maxUnavailable: 1 }), [...pods(3), ...other, ...db]).selected.length, 3);
    assert.equal(pdbSelects({ metadata: { name: 'x', namespace: 'web' }, spec: {} }, pods(1)[0]!), false);
    assert.equal(
      pdbSelects({ metadata: { name: 'x', namespace: 'web' }, spec: { selector: {} } }, db[0]!),
      true,
      'an empty selector selects every pod',
    );
  });
});

describe('pdbBlocker: may one more pod be drained?', () => {
  const fleet = pods(10);
  const rule = pdb({ maxUnavailable: 1 });
  test('maxUnavailable 1, nothing in flight: the first pod may go', () => {
    assert.equal(pdbBlocker(fleet[0]!, [rule], fleet, new Set()), undefined);
  });
  test('maxUnavailable 1, one pod in flight (even while still Ready): the next waits, naming the PDB', () => {
    const block = pdbBlocker(fleet[1]!, [rule], fleet, keys('web-0'));
    assert.equal(block?.pdb, 'web/web-pdb');
    assert.match(
      block!.message,
      /PodDisruptionBudget web\/web-pdb \(maxUnavailable 1\): 10 of 10 pods healthy, 1 in flight; draining web-1 would leave 8, it needs 9/,
    );
  });
  test('counts pods the plan does not select: another pod not Ready holds the PDB', () => {
    const ps = pods(10, { notReady: [9] });
    assert.ok(pdbBlocker(ps[0]!, [rule], ps, new Set()));
  });
  test('minAvailable 8 of 10: two may be drained at once, not three', () => {
    const min8 = pdb({ minAvailable: 8 });
    assert.equal(pdbBlocker(fleet[1]!, [min8], fleet, keys('web-0')), undefined);
    assert.ok(pdbBlocker(fleet[2]!, [min8], fleet, keys('web-0', 'web-1')));
  });
  test('a candidate already not Ready takes nothing more, so no PDB holds it', () => {
    const ps = pods(10, { notReady: [3] });
    assert.equal(pdbBlocker(ps[3]!, [rule], ps, keys('web-0')), undefined);
  });
  test('a maintained status with disruptionsAllowed 0 is a second opinion while none of its pods is in flight', () => {
    const status = {
      observedGeneration: 1,
      expectedPods: 10,
      disruptionsAllowed: 0,
      currentHealthy: 9,
      desiredHealthy: 9,
    };
    const block = pdbBlocker(fleet[0]!, [pdb({ maxUnavailable: 1 }, { status })], fleet, new Set());
    assert.match(block!.message, /status\.disruptionsAllowed 0/);
  });
  test('a status that is stale (older generation), empty (no expected pods) or failed is no opinion', () => {
    const stale = {
      observedGeneration: 1,
      expectedPods: 10,
      disruptionsAllowed: 0,
      currentHealthy: 9,
      desiredHealthy: 9,
    };
    const gen2 = pdb({ maxUnavailable: 1 }, { status: stale });
    gen2.metadata!.generation = 2;
    assert.equal(pdbBlocker(fleet[0]!, [gen2], fleet, new Set()), undefined);
    const unmanaged = pdb({ maxUnavailable: 1 }, { status: { ...stale, expectedPods: 0 } });
    assert.equal(
      pdbBlocker(fleet[0]!, [unmanaged], fleet, new Set()),
      undefined,
      'bare pods: the controller expects none',
    );
    const failed = pdb(
      { maxUnavailable: 1 },
      {
        status: {
          ...stale,
          conditions: [
            {
              type: 'DisruptionAllowed',
              status: 'False',
              reason: 'SyncFailed',
              message: 'found no controllers',
              lastTransitionTime: new Date(),
            },
          ],
        },
      },
    );
    assert.equal(pdbBlocker(fleet[0]!, [failed], fleet, new Set()), undefined);
  });
});

describe('pdbStalls', () => {
  test('minAvailable 100%, maxUnavailable 0 and minAvailable ≥ pods never allow a disruption', () => {
    for (const spec of [
      { minAvailable: '100%' },
      { maxUnavailable: 0 },
      { maxUnavailable: '0%' },
      { minAvailable: 10 },
    ]) {
      const [stall] = pdbStalls(pods(10), [pdb(spec)], pods(10));
      assert.equal(stall?.kind, 'never', JSON.stringify(spec));
      assert.match(stall!.message, /never allows one to be drained.*respectPodDisruptionBudgets: false/);
    }
  });
  test('a PDB short of healthy pods now is a wait, not a dead end; a fine one or one over no plan pod says nothing', () => {
    const ps = pods(10, { notReady: [9] });
    assert.equal(pdbStalls(ps, [pdb({ maxUnavailable: 1 })], ps)[0]?.kind, 'now');
    assert.deepEqual(pdbStalls(pods(10), [pdb({ maxUnavailable: 1 })], pods(10)), []);
    assert.deepEqual(pdbStalls(pods(2, { app: 'db', prefix: 'db' }), [pdb({ minAvailable: '100%' })], pods(10)), []);
  });
});
