// The embedded disruption controller's status, as kube-controller-manager's disruption
// controller computes it (compared against the real one by test/e2e/rollout-pdb.test.ts on the
// real backend): expected pods, desired healthy, disruptions allowed, and the condition.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { disruptionStatus, runDisruptionController } from '../../../src/sim/disruptionController.js';
import { Store, type KubeObject } from '../../../src/sim/store.js';

const NOW = new Date('2026-01-01T00:00:00Z');

function pod(name: string, ready: boolean, owner?: { kind: string; name: string; uid: string }): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'web',
      labels: { app: 'web' },
      ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', ...owner, controller: true }] } : {}),
    },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

function pdb(spec: Record<string, unknown>, generation = 1): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'p', namespace: 'web', generation },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
  };
}

const fleet = (n: number, notReady = 0, owner?: { kind: string; name: string; uid: string }) =>
  Array.from({ length: n }, (_, i) => pod(`web-${i}`, i >= notReady, owner));
const none = () => undefined;

describe('disruptionStatus', () => {
  test('integer minAvailable counts the selected pods: 10 pods, minAvailable 8 → 2 allowed, SufficientPods', () => {
    const s = disruptionStatus(pdb({ minAvailable: 8 }), fleet(10), none, NOW);
    assert.deepEqual(
      [s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed, s.observedGeneration],
      [10, 8, 10, 2, 1],
    );
    assert.deepEqual(
      s.conditions.map((c) => [c.type, c.status, c.reason]),
      [['DisruptionAllowed', 'True', 'SufficientPods']],
    );
  });
  test('maxUnavailable over pods without a controller: unmanaged, nothing expected, no disruption (InsufficientPods)', () => {
    const s = disruptionStatus(pdb({ maxUnavailable: 1 }), fleet(10), none, NOW);
    assert.deepEqual([s.expectedPods, s.disruptionsAllowed, s.conditions[0]!.reason], [0, 0, 'InsufficientPods']);
  });
  test("maxUnavailable takes the controllers' scale; a percentage rounds up", () => {
    const rs = { kind: 'ReplicaSet', name: 'web-abc', uid: 'rs-1' };
    const s = disruptionStatus(pdb({ maxUnavailable: '10%' }), fleet(10, 1, rs), () => 12, NOW);
    // 12 expected, ceil(1.2) = 2 unavailable → 10 desired; 9 healthy → none allowed.
    assert.deepEqual([s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed], [12, 10, 9, 0]);
  });
  test('a controller that cannot be found fails the sync: disruptionsAllowed 0, SyncFailed with the reason', () => {
    const s = disruptionStatus(
      pdb({ maxUnavailable: 1 }),
      fleet(3, 0, { kind: 'ReplicaSet', name: 'gone', uid: 'x' }),
      none,
      NOW,
    );
    assert.equal(s.disruptionsAllowed, 0);
    assert.deepEqual(
      [s.conditions[0]!.reason, s.conditions[0]!.message],
      ['SyncFailed', 'found no controllers for pod "web-0"'],
    );
  });
});

describe('runDisruptionController', () => {
  test('follows pods and PDBs in the store and writes the status only when it changes', async () => {
    const store = new Store();
    for (const p of fleet(4)) store.create('pods', p);
    store.create('poddisruptionbudgets', pdb({ minAvailable: 3 }));
    const stop = runDisruptionController(store, none, () => NOW);
    const settled = () => new Promise((r) => setImmediate(r));
    await settled();
    const status = () =>
      store.get('poddisruptionbudgets', 'web', 'p')!.status as { disruptionsAllowed: number; currentHealthy: number };
    assert.deepEqual([status().currentHealthy, status().disruptionsAllowed], [4, 1]);
    const version = store.get('poddisruptionbudgets', 'web', 'p')!.metadata.resourceVersion;
    store.update('pods', pod('web-0', false));
    await settled();
    assert.deepEqual([status().currentHealthy, status().disruptionsAllowed], [3, 0]);
    assert.notEqual(store.get('poddisruptionbudgets', 'web', 'p')!.metadata.resourceVersion, version);
    const after = store.get('poddisruptionbudgets', 'web', 'p')!.metadata.resourceVersion;
    store.create('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'web' } });
    store.update('pods', {
      ...pod('web-0', false),
      metadata: { ...pod('web-0', false).metadata, labels: { app: 'web', extra: 'y' } },
    });
    await settled();
    assert.equal(store.get('poddisruptionbudgets', 'web', 'p')!.metadata.resourceVersion, after, 'no change, no write');
    stop();
  });
});
