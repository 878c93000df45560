// The node agent's pods/status patch carries only what a kubelet owns, so conditions others write
// (kwave's readiness gate) are never overwritten, and keeps the kubelet's condition order.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { statusPatch } from '../../../../src/sim/agent/httpPort.js';
import { newerVersion } from '../../../../src/sim/agent/kubeHttp.js';
import type { KubeObject } from '../../../../src/sim/store.js';

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u-1' } };

describe('node agent: the pods/status patch', () => {
  test('sends the resize conditions, and deletes one the kubelet no longer reports', () => {
    const pending = { type: 'PodResizePending', status: 'True', reason: 'Deferred', message: 'no room' };
    const withPending = statusPatch(pod, { conditions: [pending, { type: 'Ready', status: 'True' }] }) as {
      status: { conditions: unknown[] };
    };
    assert.deepEqual(withPending.status.conditions, [pending, { type: 'Ready', status: 'True' }]);
    const stored: KubeObject = { ...pod, status: { conditions: [pending, { type: 'Ready', status: 'True' }] } };
    const cleared = statusPatch(stored, { conditions: [{ type: 'Ready', status: 'True' }] }) as {
      status: { conditions: unknown[] };
    };
    assert.deepEqual(cleared.status.conditions, [
      { type: 'Ready', status: 'True' },
      { type: 'PodResizePending', $patch: 'delete' },
    ]);
  });

  test('removes the reason and message a condition no longer has (Ready turned True)', () => {
    const notReady = {
      type: 'Ready',
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [nginx]',
    };
    const stored: KubeObject = { ...pod, status: { conditions: [notReady] } };
    const patch = statusPatch(stored, { conditions: [{ type: 'Ready', status: 'True' }] }) as {
      status: { conditions: unknown[] };
    };
    assert.deepEqual(patch.status.conditions, [{ type: 'Ready', status: 'True', reason: null, message: null }]);
  });

  test("sends the kubelet's conditions only, in the kubelet's order, with the uid as precondition", () => {
    const status = {
      phase: 'Running',
      qosClass: 'BestEffort',
      nominatedNodeName: 'elsewhere',
      conditions: [
        { type: 'kwave.dev/in-place-ready', status: 'True' },
        { type: 'PodReadyToStartContainers', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
      containerStatuses: [{ name: 'nginx' }],
    };
    const patch = statusPatch(pod, status) as { metadata: { uid: string }; status: Record<string, unknown> };
    assert.equal(patch.metadata.uid, 'u-1');
    assert.deepEqual(patch.status.conditions, [
      { type: 'PodReadyToStartContainers', status: 'True' },
      { type: 'Ready', status: 'True' },
    ]);
    assert.deepEqual(patch.status['$setElementOrder/conditions'], [
      { type: 'kwave.dev/in-place-ready' },
      { type: 'PodReadyToStartContainers' },
      { type: 'Ready' },
    ]);
    assert.equal(patch.status.phase, 'Running');
    assert.deepEqual(patch.status.containerStatuses, [{ name: 'nginx' }]);
    assert.equal(patch.status.qosClass, undefined, 'the API server owns qosClass');
    assert.equal(patch.status.nominatedNodeName, undefined, 'the scheduler owns nominatedNodeName');
  });

  test('resourceVersions compare as integers', () => {
    assert.equal(newerVersion('10', '9'), true);
    assert.equal(newerVersion('9', '10'), false);
    assert.equal(newerVersion('7', '7'), false);
    assert.equal(newerVersion('1', undefined), true);
    assert.equal(newerVersion(undefined, '1'), false);
  });
});
