// A pod's new version keeps the last version's objects for the parts it did not change, and is
// still equal to what was decoded (sharedParts.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { V1Pod } from '@kubernetes/client-node';
import { decodePod } from '../../../src/cluster/decode.js';
import { sameJson, shareUnchangedParts } from '../../../src/cluster/sharedParts.js';
import { params } from '../../fuzz/runs.js';

function wirePod(o: { rv: string; image?: string; ready?: string; started?: string; restarts?: number; state?: string }): unknown {
  return {
    kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'default', resourceVersion: o.rv, labels: { app: 'web' }, annotations: { 'kwave.dev/x': 'y' }, ownerReferences: [{ kind: 'ReplicaSet', name: 'rs', uid: 'u' }] },
    spec: { nodeName: 'n1', containers: [{ name: 'nginx', image: o.image ?? 'nginx:1' }] },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' },
        { type: 'Ready', status: o.ready ?? 'True', lastTransitionTime: '2026-01-01T00:00:01Z' },
      ],
      containerStatuses: [{ name: 'nginx', imageID: 'id-1', restartCount: o.restarts ?? 0, state: { running: { startedAt: o.started ?? '2026-01-01T00:00:00Z' } }, lastState: {} }],
    },
  };
}

describe('shareUnchangedParts', () => {
  test('unchanged parts are the previous objects; changed ones and the top objects are the new ones', () => {
    const before = decodePod(wirePod({ rv: '1' }));
    const after = decodePod(wirePod({ rv: '2', ready: 'False', started: '2026-01-01T00:00:09Z' }));
    const copy = structuredClone(after);
    const out = shareUnchangedParts(before, after);
    assert.equal(out, after);
    assert.deepEqual(out, copy);
    assert.equal(out.spec, before.spec);
    assert.equal(out.metadata!.labels, before.metadata!.labels);
    assert.equal(out.metadata!.annotations, before.metadata!.annotations);
    assert.equal(out.metadata!.ownerReferences, before.metadata!.ownerReferences);
    assert.notEqual(out.metadata, before.metadata);
    assert.equal(out.status!.conditions![0], before.status!.conditions![0]);
    assert.notEqual(out.status!.conditions![1], before.status!.conditions![1]);
    assert.notEqual(out.status!.containerStatuses![0], before.status!.containerStatuses![0]);
    assert.notEqual(out.status!.containerStatuses![0]!.state, before.status!.containerStatuses![0]!.state);
    assert.equal(out.status!.containerStatuses![0]!.lastState, before.status!.containerStatuses![0]!.lastState);
    // A new image: a spec of its own.
    const patched = shareUnchangedParts(out, decodePod(wirePod({ rv: '3', image: 'nginx:2' })));
    assert.notEqual(patched.spec, out.spec);
    assert.equal(patched.spec!.containers[0]!.image, 'nginx:2');
  });

  test('whatever changed, the result equals the new version as decoded', (t) => {
    const version = fc.record({ image: fc.constantFrom('nginx:1', 'nginx:2'), ready: fc.constantFrom('True', 'False'), started: fc.constantFrom('a', 'b'), restarts: fc.nat(2) });
    fc.assert(
      fc.property(version, version, (a, b) => {
        const next = decodePod(wirePod({ rv: '2', ...b }));
        const expected = structuredClone(next);
        assert.deepEqual(shareUnchangedParts(decodePod(wirePod({ rv: '1', ...a })), next), expected);
      }),
      params(t, 100),
    );
  });

  test('sameJson is deep equality of JSON values', () => {
    assert.ok(sameJson({ a: [1, { b: 'x' }] }, { a: [1, { b: 'x' }] }));
    assert.ok(!sameJson({ a: 1 }, { a: 1, b: 2 }));
    assert.ok(!sameJson({ a: 1, b: 2 }, { a: 1 }));
    assert.ok(!sameJson({ a: undefined }, { b: undefined }));
    assert.ok(!sameJson([1], { 0: 1 }));
    assert.ok(!sameJson({ 0: 1 }, [1]));
    assert.ok(!sameJson(null, {}));
    assert.ok(!sameJson([1, 2], [1]));
    assert.ok(sameJson('x', 'x'));
    const pod: V1Pod = { metadata: { name: 'a' } };
    assert.ok(sameJson(pod, structuredClone(pod)));
  });
});
