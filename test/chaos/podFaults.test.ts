// The feed-driven pod faults on a synthetic feed: an eviction lands at the very change in which
// kwave closes the n-th gate, a crash once a gate reopened on the target, and an image change on a
// pod already being deleted is noted for the invariants.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/sim/store.js';
import type { ChaosCluster, ClusterChange } from './cluster.js';
import { newDrainTracker } from './drains.js';
import type { Observed } from './invariants.js';
import { startPodFaults } from './podFaults.js';
import { drawScenario, type Scenario } from './scenario.js';

const GATE = 'kwave.dev/in-place-ready';

function pod(
  name: string,
  gate: 'True' | 'False',
  image: string,
  extra: Partial<KubeObject['metadata']> = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `u-${name}`, labels: { app: 'demo' }, ...extra },
    spec: { nodeName: 'sim-node-1', containers: [{ name: 'nginx', image }] },
    status: { conditions: [{ type: GATE, status: gate }] },
  };
}

function harness(s: Scenario) {
  let listener: ((c: ClusterChange) => void) | undefined;
  const calls: string[] = [];
  const cluster = {
    subscribe: (l: (c: ClusterChange) => void) => {
      listener = l;
      return () => undefined;
    },
    evictPod: async (name: string, grace: number) => (calls.push(`evict ${name} ${grace}`), true),
    crashContainer: async (name: string) => (calls.push(`crash ${name}`), true),
  } as unknown as ChaosCluster;
  const observed = {
    evicted: new Set(),
    crashes: new Map(),
    patchedWhileTerminating: [],
    problems: [],
    chaosOver: false,
    drains: newDrainTracker(),
  } as unknown as Observed;
  const initial = ['a', 'b', 'c'].map((n) => pod(n, 'True', 'nginx:1.14.2'));
  const timers: NodeJS.Timeout[] = [];
  startPodFaults(s, cluster, observed, initial, timers);
  const feed = (object: KubeObject) => listener!({ resource: 'pods', type: 'MODIFIED', object });
  return { feed, calls, observed, timers };
}

const base = (): Scenario => ({ ...drawScenario(1), image: 'nginx:1.25.3', evictions: [], crashes: [] });
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('chaos pod faults', () => {
  test('the second gate kwave closes is evicted at that change, with its grace period', async () => {
    const { feed, calls, observed } = harness({
      ...base(),
      evictions: [{ moment: 'drained', nth: 2, graceSeconds: 3 }],
    });
    feed(pod('a', 'False', 'nginx:1.14.2'));
    feed(pod('a', 'False', 'nginx:1.14.2')); // the same drain seen again: not another
    feed(pod('b', 'False', 'nginx:1.14.2'));
    await tick();
    assert.deepEqual(calls, ['evict b 3']);
    assert.deepEqual([...observed.evicted], ['b']);
  });

  test('a crash lands once a gate reopened on the target, not on a reopen after a failed patch', async () => {
    const { feed, calls, observed, timers } = harness({ ...base(), crashes: [{ nth: 1, afterMs: 0 }] });
    feed(pod('a', 'False', 'nginx:1.14.2'));
    feed(pod('a', 'True', 'nginx:1.14.2')); // reopened on the old image (a rollback): no crash
    feed(pod('b', 'False', 'nginx:1.25.3'));
    feed(pod('b', 'True', 'nginx:1.25.3'));
    await new Promise((r) => setTimeout(r, 20));
    for (const t of timers) clearTimeout(t);
    assert.deepEqual(calls, ['crash b']);
    assert.equal(observed.crashes.get('b'), 1);
  });

  test('an image change on a pod already being deleted is noted', () => {
    const { feed, observed } = harness(base());
    const deleting = { deletionTimestamp: '2026-12-06T07:00:00Z' };
    feed(pod('c', 'False', 'nginx:1.14.2', deleting));
    feed(pod('c', 'False', 'nginx:1.25.3', deleting));
    assert.deepEqual(observed.patchedWhileTerminating, ['c (nginx:1.14.2 → nginx:1.25.3)']);
  });
});
