// The pool hands back equal strings, stays within its bound, and leaves what it is not given to
// pool alone; decodePod with it still picks exactly the same fields and values (lastState, which no
// decision reads, left out).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StringPool } from '../../../src/cluster/stringPool.js';
import { decodePod } from '../../../src/cluster/decode.js';

describe('StringPool', () => {
  test('a repeated value is pooled once; non-strings give undefined', () => {
    const pool = new StringPool(10);
    const a = JSON.parse('"IfNotPresent"') as string;
    const b = JSON.parse('"IfNotPresent"') as string;
    assert.equal(pool.share(a), 'IfNotPresent');
    assert.equal(pool.share(b), 'IfNotPresent');
    assert.equal(pool.size, 1);
    assert.equal(pool.share(3), undefined);
    assert.equal(pool.share(undefined), undefined);
    assert.equal(pool.size, 1);
  });

  test('full, it starts over instead of growing', () => {
    const pool = new StringPool(3);
    for (let i = 0; i < 3; i++) pool.share(`v${i}`);
    assert.equal(pool.size, 3);
    assert.equal(pool.share('v3'), 'v3');
    assert.equal(pool.size, 1);
    for (let i = 0; i < 100; i++) assert.equal(pool.share(`w${i}`), `w${i}`);
    assert.ok(pool.size <= 3);
  });

  test('strings longer than the limit are returned as they are, not pooled', () => {
    const pool = new StringPool(10, 4);
    assert.equal(pool.share('abcdef'), 'abcdef');
    assert.equal(pool.size, 0);
    assert.equal(pool.share(''), '');
    assert.equal(pool.size, 1);
  });
});

describe('decodePod with pooled values', () => {
  const wirePod = (i: number) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `demo-${i}`,
      namespace: 'default',
      uid: `uid-${i}`,
      resourceVersion: String(100 + i),
      labels: { app: 'demo' },
      annotations: { 'kwave.dev/state': `{"n":${i}}`, 'other/x': 'dropped' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'demo-rs', uid: 'rs-uid', controller: true },
      ],
      managedFields: [{ manager: 'x' }],
    },
    spec: {
      nodeName: 'node-1',
      containers: [
        { name: 'app', image: 'nginx:1.25.0', imagePullPolicy: 'IfNotPresent', env: [{ name: 'A', value: 'b' }] },
      ],
      readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }],
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-01T18:00:00Z' }],
      containerStatuses: [
        {
          name: 'app',
          image: 'nginx:1.25.0',
          imageID: 'docker.io/library/nginx@sha256:abc',
          containerID: `containerd://${i}`,
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: '2026-12-01T18:00:01Z' } },
          lastState: {
            terminated: {
              exitCode: 0,
              reason: 'Completed',
              startedAt: '2026-12-01T17:00:00Z',
              finishedAt: '2026-12-01T17:59:59Z',
            },
          },
        },
      ],
    },
  });

  test('the view of each pod is the fields picked, values unchanged', () => {
    for (const i of [1, 2]) {
      const raw = wirePod(i);
      assert.deepEqual(decodePod(JSON.parse(JSON.stringify(raw))), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `demo-${i}`,
          namespace: 'default',
          uid: `uid-${i}`,
          resourceVersion: String(100 + i),
          labels: { app: 'demo' },
          annotations: { 'kwave.dev/state': `{"n":${i}}` },
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'demo-rs', uid: 'rs-uid', controller: true },
          ],
        },
        spec: {
          nodeName: 'node-1',
          containers: [{ name: 'app', image: 'nginx:1.25.0', imagePullPolicy: 'IfNotPresent' }],
          readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }],
          tolerations: [
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
          ],
        },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-01T18:00:00Z' }],
          containerStatuses: [
            {
              name: 'app',
              image: 'nginx:1.25.0',
              imageID: 'docker.io/library/nginx@sha256:abc',
              containerID: `containerd://${i}`,
              ready: true,
              started: true,
              restartCount: 0,
              state: { running: { startedAt: '2026-12-01T18:00:01Z' } },
            },
          ],
        },
      });
    }
  });
});
