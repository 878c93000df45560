// Which pods `kwave rollback` reverts (pure): found by the chaos suite on the real control plane
// (seed 325791685): a pod drained by the upgrade, then stopped before its image patch because its
// node went NotReady, was left with its gate False by the halted run — and `kwave rollback` once
// the node was back rolled back 0 pods, leaving it out of service for good.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { GATE_CLOSED_REASON, GATE_OPEN_REASON, gateMessage } from '../../../src/inplace/gateCondition.js';
import { encodeState } from '../../../src/inplace/state.js';
import { rollbackTargets, upgradedByRevision } from '../../../src/rollout/rollbackTargets.js';

const GATE = 'kwave.dev/in-place-ready';
const plan: Parameters<typeof upgradedByRevision>[1] = {
  name: 'web',
  revision: 'r1',
  readinessGate: { conditionType: GATE, required: true },
  target: { namespaces: ['default'], selector: { matchLabels: { app: 'demo' } } },
};

function pod(
  name: string,
  gate: { status: 'True' | 'False'; reason: string; message: string },
  extra: { deleting?: boolean; namespace?: string } = {},
): V1Pod {
  return {
    metadata: {
      name,
      namespace: extra.namespace ?? 'default',
      uid: `uid-${name}`,
      ...(extra.deleting ? { deletionTimestamp: new Date() } : {}),
    },
    status: { conditions: [{ type: GATE, ...gate }] },
  };
}

const drainedBy = (direction: 'upgrade' | 'rollback', planName = 'web', revision = 'r1') => ({
  status: 'False' as const,
  reason: GATE_CLOSED_REASON,
  message: gateMessage(direction, planName, revision),
});

/** A pod this revision patched (its upgrade state on it), its gate False. */
function patchedPod(name: string): V1Pod {
  const state = encodeState({
    plan: 'web',
    revision: 'r1',
    wave: 2,
    startedAt: '2026-12-01T00:00:00Z',
    direction: 'upgrade',
    containers: {
      nginx: {
        fromImage: 'nginx:1.14.2',
        fromImageID: 'docker.io/library/nginx@sha256:aa',
        fromContainerID: 'containerd://1',
        fromRestartCount: 0,
        toImage: 'nginx:1.25.3',
      },
    },
  });
  const base = pod(name, drainedBy('upgrade'));
  return { ...base, metadata: { ...base.metadata, annotations: { 'kwave.dev/in-place-state': state } } };
}

describe('upgradedByRevision (kwave rollback targets)', () => {
  test('a pod this revision drained but never patched is reverted (its gate reopened), after the patched ones', () => {
    const patched = patchedPod('demo-1');
    const targets = upgradedByRevision([pod('demo-0', drainedBy('upgrade')), patched], plan).map(
      (t) => `${t.name}@${t.wave}`,
    );
    assert.deepEqual(targets, ['demo-1@2', 'demo-0@0']);
  });

  test('a gate held by another plan or revision, an open gate, a deleted pod or another namespace is not ours to reopen', () => {
    const pods = [
      pod('other-plan', drainedBy('upgrade', 'api')),
      pod('other-revision', drainedBy('upgrade', 'web', 'r0')),
      pod('open', { status: 'True', reason: GATE_OPEN_REASON, message: gateMessage('upgrade', 'web', 'r1', true) }),
      pod('deleting', drainedBy('upgrade'), { deleting: true }),
      pod('elsewhere', drainedBy('upgrade'), { namespace: 'team-b' }),
    ];
    assert.deepEqual(upgradedByRevision(pods, plan), []);
  });
});

describe('rollbackTargets (after a halt)', () => {
  // Chaos on real kubelets: a killed run left demo-1 drained before its patch (seed 842216360) and
  // demo-3 patched (seed 2236777508); the halted run that followed found the first queued for its
  // start and the second waiting for its node, and with `rollback: failed` reverted neither.
  test('rollback: failed reverts the failed pods and every pod still held out of service, not those that finished', () => {
    const finished = patchedPod('demo-0');
    const gate = finished.status!.conditions![0]!;
    Object.assign(gate, {
      status: 'True',
      reason: GATE_OPEN_REASON,
      message: gateMessage('upgrade', 'web', 'r1', true),
    });
    const pods = [finished, pod('demo-1', drainedBy('upgrade')), patchedPod('demo-2'), patchedPod('demo-3')];
    const targets = rollbackTargets(pods, plan, 'failed', new Set(['default/demo-2']), 3).map((t) => t.name);
    assert.deepEqual(targets.sort(), ['demo-1', 'demo-2', 'demo-3']);
  });
});
