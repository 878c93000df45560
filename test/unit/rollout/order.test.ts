import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { naturalCompare, naturalCompareInPlace, orderPods, type PodPlacement } from '../../../src/rollout/order.js';

const names = (pods: PodPlacement[]) => pods.map((p) => `${p.namespace}/${p.name}`);
const pod = (name: string, node?: string, zone?: string, namespace = 'default'): PodPlacement => ({
  namespace,
  name,
  node,
  zone,
});

describe('naturalCompare', () => {
  test('web-2 sorts before web-10', () => {
    assert.deepEqual(['web-10', 'web-2', 'web-1', 'web-10a', 'web'].sort(naturalCompare), [
      'web',
      'web-1',
      'web-2',
      'web-10',
      'web-10a',
    ]);
  });
  test('numbers longer than a double compare by value', () => {
    assert.ok(naturalCompare('n-99999999999999999999', 'n-100000000000000000000') < 0);
  });
  test('zero padding ties are broken, so the order is total', () => {
    assert.notEqual(naturalCompare('web-01', 'web-1'), 0);
    assert.equal(Math.sign(naturalCompare('web-01', 'web-1')) + Math.sign(naturalCompare('web-1', 'web-01')), 0);
  });
  test('is antisymmetric and zero only for equal strings', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'b', '-', '0', '1', '9') }),
        fc.string({ unit: fc.constantFrom('a', 'b', '-', '0', '1', '9') }),
        (a, b) => {
          assert.equal(Math.sign(naturalCompare(a, b)) + Math.sign(naturalCompare(b, a)), 0);
          assert.equal(naturalCompare(a, b) === 0, a === b);
        },
      ),
    );
  });
});

describe('naturalCompareInPlace', () => {
  const sign = (n: number) => Math.sign(n);
  test('orders every pair as naturalCompare does', () => {
    const unit = fc.oneof(
      fc.constantFrom('a', 'b', '-', '0', '00', '1', '9', '10', '99999999999999999999'),
      fc.string({ unit: 'binary', maxLength: 2 }),
    );
    const text = fc.array(unit, { maxLength: 6 }).map((u) => u.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        assert.equal(sign(naturalCompareInPlace(a, b)), sign(naturalCompare(a, b)));
        assert.equal(sign(naturalCompareInPlace(b, a)), sign(naturalCompare(b, a)));
      }),
      { numRuns: 5000 },
    );
  });
  test('the cases worked in naturalCompare', () => {
    for (const [a, b] of [
      ['web-2', 'web-10'],
      ['web-10', 'web-10a'],
      ['web-01', 'web-1'],
      ['n-99999999999999999999', 'n-100000000000000000000'],
      ['', 'a'],
      ['a', ''],
      ['demo-9', 'demo-10'],
      ['x1', 'x01'],
      ['1a', 'a1'],
    ] as const) {
      assert.equal(sign(naturalCompareInPlace(a, b)), sign(naturalCompare(a, b)), `${a} vs ${b}`);
    }
  });
});

describe('orderPods', () => {
  const fleet = [
    pod('web-10', 'n2', 'b'),
    pod('web-2', 'n1', 'a'),
    pod('web-1', 'n1', 'a'),
    pod('web-3', 'n3', 'c'),
    pod('web-4', 'n2', 'b'),
    pod('web-5', 'n3', 'c'),
    pod('api-1', 'n1', 'a', 'api'),
  ];

  test('name: namespace, then natural name order', () => {
    assert.deepEqual(names(orderPods(fleet, 'name')), [
      'api/api-1',
      'default/web-1',
      'default/web-2',
      'default/web-3',
      'default/web-4',
      'default/web-5',
      'default/web-10',
    ]);
  });

  test('spread-nodes: one pod per node per round, nodes in name order', () => {
    // n1: api-1, web-1, web-2; n2: web-4, web-10; n3: web-3, web-5
    assert.deepEqual(names(orderPods(fleet, 'spread-nodes')), [
      'api/api-1',
      'default/web-4',
      'default/web-3',
      'default/web-1',
      'default/web-10',
      'default/web-5',
      'default/web-2',
    ]);
  });

  test('spread-zones: the first three pods touch all three zones', () => {
    const ordered = orderPods(fleet, 'spread-zones');
    assert.deepEqual(new Set(ordered.slice(0, 3).map((p) => p.zone)), new Set(['a', 'b', 'c']));
  });

  test('pods without a node come last, in name order', () => {
    const pods = [pod('p-2'), pod('p-1', 'n1'), pod('p-3'), pod('p-0', 'n2')];
    assert.deepEqual(names(orderPods(pods, 'spread-nodes')), [
      'default/p-1',
      'default/p-0',
      'default/p-2',
      'default/p-3',
    ]);
  });

  const arbPods = fc.uniqueArray(
    fc.record({
      namespace: fc.constantFrom('a', 'b'),
      name: fc.stringMatching(/^[a-c]-[0-9]{1,3}$/),
      node: fc.option(fc.constantFrom('n1', 'n2', 'n3', 'n10'), { nil: undefined }),
      zone: fc.option(fc.constantFrom('z1', 'z2'), { nil: undefined }),
    }),
    { selector: (p) => `${p.namespace}/${p.name}`, maxLength: 40 },
  );

  for (const order of ['name', 'spread-nodes', 'spread-zones'] as const) {
    test(`${order}: a permutation, the same whatever the input order`, () => {
      fc.assert(
        fc.property(arbPods, fc.func(fc.integer()), (pods, key) => {
          const shuffled = [...pods].sort((x, y) => key(x.name) - key(y.name));
          const a = orderPods(pods, order);
          const b = orderPods(shuffled, order);
          assert.deepEqual(names(a), names(b));
          assert.deepEqual([...names(a)].sort(), [...names(pods)].sort());
        }),
      );
    });
  }

  test('spread-nodes: every prefix touches as many nodes as it can', () => {
    fc.assert(
      fc.property(arbPods, (pods) => {
        const scheduled = pods.filter((p) => p.node !== undefined);
        const ordered = orderPods(scheduled, 'spread-nodes');
        const nodes = new Set(scheduled.map((p) => p.node)).size;
        for (let k = 1; k <= ordered.length; k++) {
          const touched = new Set(ordered.slice(0, k).map((p) => p.node)).size;
          assert.ok(touched >= Math.min(k, nodes), `prefix ${k} touches ${touched} of ${nodes} nodes`);
        }
      }),
    );
  });
});
