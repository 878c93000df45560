// Writes share the frozen parts of stored snapshots instead of copying whole objects, and frozen
// values are decoded, hashed and serialised once. These tests pin what sharing must not change:
// stored objects stay deep-frozen and independent of the caller's, a change after a cached value
// is seen, and what a watcher or client reads is byte for byte the plain JSON of the object.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { frozenJson } from '../../../../src/sim/apiserver/json.js';
import { RESOURCES } from '../../../../src/sim/apiserver/resources.js';
import { objectsWorld, write } from './world.js';
import { jsonHash } from '../../../../src/sim/json.js';
import type { KubeObject } from '../../../../src/sim/store.js';

const SMP = 'application/strategic-merge-patch+json';
const { pods } = RESOURCES;

function world() {
  const w = objectsWorld();
  const pod = w.ops.create(
    pods,
    'default',
    { metadata: { name: 'a' }, spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'app:1' }] } },
    write,
  );
  return { ...w, pod };
}

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

describe('structural sharing of writes', () => {
  test('a status write shares the stored spec, stays deep-frozen, and does not follow the caller', () => {
    const { store, pod } = world();
    const status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    const stored = store.update('pods', { ...pod, status }, pod.metadata.resourceVersion);
    assert.equal(stored.spec, pod.spec, 'the unchanged spec is the same frozen object');
    assert.ok(isDeepFrozen(stored));
    status.conditions[0]!.status = 'False';
    status.phase = 'Failed';
    assert.deepEqual(stored.status, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
    assert.equal(pod.status && (pod.status as { phase: string }).phase, 'Pending', 'the earlier snapshot is untouched');
  });

  test('a strategic merge patch of the image leaves the stored snapshot as it was and shares the status', () => {
    const { ops, pod, changes } = world();
    const before = JSON.stringify(pod);
    const patched = ops.patch(
      pods,
      'default',
      'a',
      undefined,
      SMP,
      JSON.stringify({ spec: { containers: [{ name: 'app', image: 'app:2' }] } }),
      write,
    );
    assert.equal(JSON.stringify(pod), before);
    assert.equal((patched.spec as { containers: { image: string }[] }).containers[0]!.image, 'app:2');
    assert.equal(patched.status, pod.status, 'the untouched status is shared');
    assert.ok(isDeepFrozen(patched));
    assert.equal(changes.at(-1)!.object, patched);
  });

  test('a status patch after a decoded (cached) status is seen, and times are still cut to seconds', () => {
    const { ops } = world();
    const cond = (status: string, t: string) =>
      JSON.stringify({ status: { conditions: [{ type: 'example.com/gate', status, lastTransitionTime: t }] } });
    const first = ops.patch(pods, 'default', 'a', 'status', SMP, cond('False', '2025-01-01T00:00:01.900Z'), write);
    // The same status again: decoded from the cache, nothing written.
    assert.equal(ops.patch(pods, 'default', 'a', 'status', SMP, cond('False', '2025-01-01T00:00:01Z'), write), first);
    const second = ops.patch(pods, 'default', 'a', 'status', SMP, cond('True', '2025-01-01T00:00:02.5Z'), write);
    const gate = (p: KubeObject) =>
      (p.status as { conditions: { type: string; status: string; lastTransitionTime: string }[] }).conditions.find(
        (c) => c.type === 'example.com/gate',
      );
    assert.deepEqual(gate(first), {
      type: 'example.com/gate',
      status: 'False',
      lastTransitionTime: '2025-01-01T00:00:01Z',
      lastProbeTime: null,
    });
    assert.deepEqual(gate(second), {
      type: 'example.com/gate',
      status: 'True',
      lastTransitionTime: '2025-01-01T00:00:02Z',
      lastProbeTime: null,
    });
  });

  test('a stored status with a fraction of a second is decoded on the next status patch', () => {
    const { store, ops, pod } = world();
    // The embedded kubelet writes the store directly, so its status has not been decoded.
    const raw = store.update(
      'pods',
      { ...pod, status: { phase: 'Running', startTime: '2025-01-01T00:00:03.700Z' } },
      pod.metadata.resourceVersion,
    );
    const patched = ops.patch(
      pods,
      'default',
      'a',
      'status',
      SMP,
      JSON.stringify({ status: { message: 'hi' } }),
      write,
    );
    assert.notEqual(patched, raw);
    assert.equal((patched.status as { startTime: string }).startTime, '2025-01-01T00:00:03Z');
  });
});

describe('once per frozen value', () => {
  test('frozenJson gives the bytes JSON.stringify gives, and a new snapshot its own', () => {
    const { store, ops, pod } = world();
    assert.equal(frozenJson(pod), JSON.stringify(pod));
    assert.equal(frozenJson(pod), JSON.stringify(pod));
    const next = store.update('pods', { ...pod, status: { phase: 'Running' } }, pod.metadata.resourceVersion);
    assert.equal(next.spec, pod.spec);
    assert.equal(frozenJson(next), JSON.stringify(next), 'the shared spec text is reused with the new status');
    assert.notEqual(frozenJson(next), frozenJson(pod));
    const odd = store.update(
      'pods',
      { ...next, extra: undefined, status: { phase: 'Running', message: 'x' } },
      next.metadata.resourceVersion,
    );
    assert.equal(frozenJson(odd), JSON.stringify(odd), 'an undefined member is left out');
    const specFirst = Object.freeze({ spec: pod.spec, kind: 'Pod', none: undefined });
    assert.equal(frozenJson(specFirst), JSON.stringify(specFirst), 'the spec first, nothing but undefined after it');
    const specLast = Object.freeze({ kind: 'Pod', spec: pod.spec });
    assert.equal(frozenJson(specLast), JSON.stringify(specLast), 'the spec last');
    const patched = ops.patch(
      pods,
      'default',
      'a',
      undefined,
      SMP,
      JSON.stringify({ metadata: { annotations: { a: 'b' } } }),
      write,
    );
    assert.equal(frozenJson(patched), JSON.stringify(patched));
    assert.equal(frozenJson(patched, 'list'), JSON.stringify(patched), 'a list item: the text an answer made');
    const unsent = store.update(
      'pods',
      { ...patched, status: { phase: 'Running', message: 'y' } },
      patched.metadata.resourceVersion,
    );
    assert.equal(frozenJson(unsent, 'list'), JSON.stringify(unsent), 'a list item never sent before');
  });

  test('jsonHash of a frozen spec is cached, and a changed spec hashes differently', () => {
    const { ops, pod } = world();
    const c0 = (pod.spec as { containers: object[] }).containers[0]!;
    const h0 = jsonHash(c0);
    assert.equal(jsonHash(c0), h0);
    assert.equal(jsonHash(structuredClone(c0)), h0, 'a mutable copy hashes the same');
    const patched = ops.patch(
      pods,
      'default',
      'a',
      undefined,
      SMP,
      JSON.stringify({ spec: { containers: [{ name: 'app', image: 'app:2' }] } }),
      write,
    );
    assert.notEqual(jsonHash((patched.spec as { containers: object[] }).containers[0]!), h0);
  });
});
