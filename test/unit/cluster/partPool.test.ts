// The pool hands back one frozen copy per content, never a part of other content, and stays within
// its bound; decodePod's views share their repeated parts across pods and versions.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PartPool } from '../../../src/cluster/partPool.js';
import { decodePod } from '../../../src/cluster/decode.js';

describe('PartPool', () => {
  test('equal content, one frozen copy; other content, its own', () => {
    const pool = new PartPool();
    const a = pool.shareObject('condition', { type: 'Ready', status: 'True' });
    const b = pool.shareObject('condition', { type: 'Ready', status: 'True' });
    assert.equal(a, b);
    assert.ok(Object.isFrozen(a));
    assert.throws(() => {
      (a as { status: string }).status = 'False';
    }, TypeError);
    assert.notEqual(pool.shareObject('condition', { type: 'Ready', status: 'False' }), a);
    // Same values under other names, in another order, or of another kind: not the same part.
    assert.deepEqual(pool.shareObject('condition', { status: 'True', type: 'Ready' }), {
      status: 'True',
      type: 'Ready',
    });
    assert.deepEqual(pool.shareObject('condition', { type: 'Ready', reason: 'True' }), {
      type: 'Ready',
      reason: 'True',
    });
    assert.notEqual(pool.shareObject('other', { type: 'Ready', status: 'True' }), a);
    // The string "undefined" is a value like any other.
    assert.deepEqual(pool.shareObject('condition', { type: 'Ready', status: 'undefined' }), {
      type: 'Ready',
      status: 'undefined',
    });
  });

  test('lists: by their items, in order; a prefix is a list of its own', () => {
    const pool = new PartPool();
    const x = pool.shareObject('c', { n: '1' });
    const y = pool.shareObject('c', { n: '2' });
    const xy = pool.shareList('cs', [x, y]);
    assert.equal(pool.shareList('cs', [x, y]), xy);
    assert.ok(Object.isFrozen(xy));
    assert.deepEqual(pool.shareList('cs', [y, x]), [y, x]);
    assert.notEqual(pool.shareList('cs', [y, x]), xy);
    assert.deepEqual(pool.shareList('cs', [x]), [x]);
    assert.deepEqual(pool.shareList('cs', []), []);
    assert.equal(pool.shareList('cs', [x]), pool.shareList('cs', [x]));
  });

  test('full, it starts over instead of growing', () => {
    const pool = new PartPool(50);
    for (let i = 0; i < 1000; i++) assert.deepEqual(pool.shareObject('v', { i: String(i) }), { i: String(i) });
    assert.ok(pool.size <= 50, `size ${pool.size}`);
  });
});

describe('decodePod shares repeated parts', () => {
  const wirePod = (name: string, readyAt: string) =>
    JSON.parse(
      JSON.stringify({
        metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'demo', tier: 'web' } },
        spec: {
          nodeName: 'node-1',
          containers: [{ name: 'app', image: 'nginx:1.25.0', imagePullPolicy: 'IfNotPresent' }],
          readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }],
          tolerations: [
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
          ],
        },
        status: {
          conditions: [
            { type: 'Initialized', status: 'True', lastTransitionTime: '2026-12-01T17:00:00Z' },
            { type: 'Ready', status: 'True', lastTransitionTime: readyAt },
          ],
          containerStatuses: [
            {
              name: 'app',
              containerID: `containerd://${name}`,
              state: { running: { startedAt: '2026-12-01T17:00:01Z' } },
            },
          ],
        },
      }),
    ) as unknown;

  test('two pods: their common parts are one object, what differs is their own', () => {
    const a = decodePod(wirePod('a', '2026-12-01T18:00:00Z'));
    const b = decodePod(wirePod('b', '2026-12-01T18:00:00Z'));
    const c = decodePod(wirePod('c', '2026-12-01T18:00:05Z'));
    assert.equal(a.metadata!.labels, b.metadata!.labels);
    assert.equal(a.spec!.containers, b.spec!.containers);
    assert.equal(a.spec!.tolerations, b.spec!.tolerations);
    assert.equal(a.spec!.readinessGates, b.spec!.readinessGates);
    assert.equal(a.status!.conditions, b.status!.conditions);
    assert.equal(a.status!.containerStatuses![0]!.state, b.status!.containerStatuses![0]!.state);
    assert.notEqual(a.status!.containerStatuses![0], b.status!.containerStatuses![0]);
    // c's Ready turned at another time: its list is its own, its Initialized is shared.
    assert.notEqual(c.status!.conditions, a.status!.conditions);
    assert.equal(c.status!.conditions![0], a.status!.conditions![0]);
    assert.equal(c.status!.conditions![1]!.lastTransitionTime, '2026-12-01T18:00:05Z');
    assert.ok(Object.isFrozen(a.status!.conditions) && Object.isFrozen(a.status!.conditions![1]));
  });
});
