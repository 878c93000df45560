import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { nodeHealth, nodeLostMessage, nodeWaitMessage, type NodeHealth } from '../../../src/rollout/nodeHealth.js';

const T0 = Date.parse('2026-12-01T09:00:00Z');

function node(
  o: {
    ready?: 'True' | 'False' | 'Unknown' | null;
    readySince?: number;
    reason?: string;
    taints?: { key: string; effect: string; timeAdded?: number }[];
  } = {},
): V1Node {
  const ready = o.ready === undefined ? 'True' : o.ready;
  return {
    metadata: { name: 'sim-node-2' },
    spec: o.taints
      ? {
          taints: o.taints.map((t) => ({
            key: t.key,
            effect: t.effect,
            ...(t.timeAdded !== undefined ? { timeAdded: new Date(t.timeAdded) } : {}),
          })),
        }
      : {},
    status: {
      conditions: [
        { type: 'MemoryPressure', status: 'False' },
        ...(ready === null
          ? []
          : [
              {
                type: 'Ready',
                status: ready,
                lastTransitionTime: new Date(o.readySince ?? T0 - 3_600_000),
                ...(o.reason ? { reason: o.reason } : {}),
              },
            ]),
      ],
    },
  };
}

const down = (h: NodeHealth) => {
  assert.equal(h.canAct, false, JSON.stringify(h));
  return h as Extract<NodeHealth, { canAct: false }>;
};

describe('nodeHealth', () => {
  const cases: {
    name: string;
    sighting: Parameters<typeof nodeHealth>[0];
    canAct: boolean;
    sinceMs?: number;
    evidence?: string;
  }[] = [
    { name: 'never seen: can act (no news is not bad news)', sighting: undefined, canAct: true },
    { name: 'Ready True, no taints: can act', sighting: { node: node() }, canAct: true },
    { name: 'no Ready condition yet, no taints: can act', sighting: { node: node({ ready: null }) }, canAct: true },
    {
      name: 'an unrelated taint: can act',
      sighting: { node: node({ taints: [{ key: 'dedicated', effect: 'NoSchedule' }] }) },
      canAct: true,
    },
    {
      name: 'Ready Unknown (kubelet silent): cannot act, since the transition',
      sighting: { node: node({ ready: 'Unknown', readySince: T0 - 12_000, reason: 'NodeStatusUnknown' }) },
      canAct: false,
      sinceMs: T0 - 12_000,
      evidence: 'Ready=Unknown (NodeStatusUnknown)',
    },
    {
      name: 'Ready False: cannot act',
      sighting: { node: node({ ready: 'False', readySince: T0 - 1_000 }) },
      canAct: false,
      sinceMs: T0 - 1_000,
      evidence: 'Ready=False',
    },
    {
      name: 'Ready True but the unreachable taint: cannot act, since the taint',
      sighting: {
        node: node({ taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: T0 - 5_000 }] }),
      },
      canAct: false,
      sinceMs: T0 - 5_000,
      evidence: 'taint node.kubernetes.io/unreachable:NoExecute',
    },
    {
      name: 'the not-ready taint without a time: cannot act, since unknown',
      sighting: { node: node({ taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] }) },
      canAct: false,
      evidence: 'taint node.kubernetes.io/not-ready:NoSchedule',
    },
    {
      name: 'deleted: cannot act, since the deletion',
      sighting: { goneSinceMs: T0 - 60_000 },
      canAct: false,
      sinceMs: T0 - 60_000,
      evidence: 'deleted',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const h = nodeHealth(c.sighting);
      assert.equal(h.canAct, c.canAct);
      if (!h.canAct) {
        assert.equal(h.sinceMs, c.sinceMs);
        assert.equal(h.evidence, c.evidence);
      }
    });
  }
  test('string timestamps (raw watch JSON) are read too', () => {
    const n = node({ ready: 'Unknown' });
    n.status!.conditions![1]!.lastTransitionTime = '2026-12-01T08:59:48Z' as unknown as Date;
    assert.equal(down(nodeHealth({ node: n })).sinceMs, T0 - 12_000);
  });
});

describe('node messages', () => {
  const h = down(
    nodeHealth({ node: node({ ready: 'Unknown', readySince: T0 - 12_000, reason: 'NodeStatusUnknown' }) }),
  );
  test('waiting line: relative age', () =>
    assert.equal(nodeWaitMessage('sim-node-2', h, T0), 'node sim-node-2 is NotReady since 12s'));
  test('failure message: since when, absolute, and why', () => {
    assert.equal(
      nodeLostMessage('sim-node-2', h),
      'node sim-node-2 is NotReady since 2026-12-01T08:59:48Z (Ready=Unknown (NodeStatusUnknown))',
    );
  });
  test('gone', () =>
    assert.equal(
      nodeWaitMessage('n', down(nodeHealth({ goneSinceMs: T0 - 125_000 })), T0),
      'node n is gone since 2m5s',
    ));
});
