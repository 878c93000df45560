import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RESOURCES } from '../../../../src/sim/apiserver/resources.js';
import { objectsWorld, write } from './world.js';
import type { Status } from '../../../../src/sim/apiserver/status.js';
import { refusal } from './refusal.js';
import type { KubeObject } from '../../../../src/sim/store.js';

const { pods, leases, configmaps } = RESOURCES;
const world = objectsWorld;
const podBody = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'nginx', image: 'nginx:1.14.2' }], ...extra },
});

describe('create', () => {
  test('a pod gets defaults and status Pending with its QoS class', () => {
    const { ops } = world();
    const p = ops.create(pods, 'default', podBody('a'), write);
    assert.deepEqual(p.status, { phase: 'Pending', qosClass: 'BestEffort' });
    const spec = p.spec as Record<string, unknown>;
    assert.equal(spec.restartPolicy, 'Always');
    assert.equal(spec.terminationGracePeriodSeconds, 30);
    assert.equal((spec.containers as Record<string, unknown>[])[0]!.imagePullPolicy, 'IfNotPresent');
    assert.ok(p.metadata.uid && p.metadata.resourceVersion && p.metadata.creationTimestamp);
  });

  test('generateName makes a name with a 5-character suffix', () => {
    const { ops } = world();
    const p = ops.create(pods, 'default', { ...podBody(''), metadata: { generateName: 'web-' } }, write);
    assert.match(p.metadata.name, /^web-[a-z0-9]{5}$/);
  });

  test('a duplicate is 409 AlreadyExists; a bad name is 422; a missing namespace is 404', () => {
    const { ops } = world();
    ops.create(pods, 'default', podBody('a'), write);
    const dup = refusal(() => ops.create(pods, 'default', podBody('a'), write));
    assert.equal(dup.code, 409);
    assert.equal(dup.reason, 'AlreadyExists');
    assert.equal(dup.message, 'pods "a" already exists');
    const bad = refusal(() => ops.create(pods, 'default', podBody('Bad_Name'), write));
    assert.equal(bad.code, 422);
    assert.match(
      bad.message!,
      /^Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    const nons = refusal(() => ops.create(pods, 'nowhere', podBody('a'), write));
    assert.equal(nons.message, 'namespaces "nowhere" not found');
  });

  test('a namespace mismatch between body and URL is 400', () => {
    const { ops } = world();
    const s = refusal(() =>
      ops.create(pods, 'default', { ...podBody('a'), metadata: { name: 'a', namespace: 'other' } }, write),
    );
    assert.equal(s.code, 400);
  });
});

describe('update', () => {
  test('a stale resourceVersion is the real 409 Conflict', () => {
    const { ops } = world();
    const p = ops.create(pods, 'default', podBody('a'), write);
    ops.patch(
      pods,
      'default',
      'a',
      undefined,
      'application/merge-patch+json',
      '{"metadata":{"labels":{"x":"1"}}}',
      write,
    );
    const s = refusal(() => ops.update(pods, 'default', 'a', undefined, p, write));
    assert.equal(s.code, 409);
    assert.equal(s.reason, 'Conflict');
    assert.equal(
      s.message,
      'Operation cannot be fulfilled on pods "a": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.deepEqual(s.details, { name: 'a', kind: 'pods' });
  });

  test('a resourceVersion inside a patch is a precondition', () => {
    const { ops } = world();
    ops.create(pods, 'default', podBody('a'), write);
    const s = refusal(() =>
      ops.patch(
        pods,
        'default',
        'a',
        undefined,
        'application/merge-patch+json',
        '{"metadata":{"resourceVersion":"1","labels":{"x":"1"}}}',
        write,
      ),
    );
    assert.equal(s.code, 409);
  });

  test('a no-op update writes nothing and keeps the version', () => {
    const { ops, changes } = world();
    const p = ops.create(pods, 'default', podBody('a'), write);
    changes.length = 0;
    const same = ops.patch(
      pods,
      'default',
      'a',
      undefined,
      'application/merge-patch+json',
      '{"metadata":{"labels":null}}',
      write,
    );
    assert.equal(same.metadata.resourceVersion, p.metadata.resourceVersion);
    assert.equal(changes.length, 0);
  });

  test('status sent to pods is ignored; spec sent to pods/status is ignored', () => {
    const { ops } = world();
    ops.create(pods, 'default', podBody('a'), write);
    const main = ops.patch(
      pods,
      'default',
      'a',
      undefined,
      'application/merge-patch+json',
      '{"status":{"phase":"Running"},"metadata":{"labels":{"l":"1"}}}',
      write,
    );
    assert.equal((main.status as Record<string, unknown>).phase, 'Pending');
    assert.equal(main.metadata.labels?.l, '1');
    const st = ops.patch(
      pods,
      'default',
      'a',
      'status',
      'application/strategic-merge-patch+json',
      '{"spec":{"containers":[{"name":"nginx","image":"nginx:9"}]},"status":{"conditions":[{"type":"kwave.dev/in-place-ready","status":"True"}]},"metadata":{"labels":{"s":"1"}}}',
      write,
    );
    assert.equal(
      ((st.spec as Record<string, unknown>).containers as Record<string, unknown>[])[0]!.image,
      'nginx:1.14.2',
    );
    assert.deepEqual((st.status as Record<string, unknown>).conditions, [
      { type: 'kwave.dev/in-place-ready', status: 'True', lastProbeTime: null, lastTransitionTime: null },
    ]); // unset metav1.Time: null, as the real server encodes it
    assert.equal(st.metadata.labels?.s, '1', 'labels are persisted through /status');
  });

  test('a forbidden pod change is 422 Invalid with a FieldValueForbidden cause', () => {
    const { ops } = world();
    ops.create(pods, 'default', podBody('a'), write);
    const s = refusal(() =>
      ops.patch(
        pods,
        'default',
        'a',
        undefined,
        'application/json-patch+json',
        '[{"op":"add","path":"/spec/nodeName","value":"n9"}]',
        write,
      ),
    );
    assert.equal(s.code, 422);
    assert.equal(s.reason, 'Invalid');
    assert.ok(
      s.message!.startsWith('Pod "a" is invalid: spec: Forbidden: pod updates may not change fields other than'),
    );
    assert.equal(s.details?.kind, 'Pod');
    assert.equal(s.details?.causes?.[0]?.reason, 'FieldValueForbidden');
    assert.equal(s.details?.causes?.[0]?.field, 'spec');
  });

  test('a Lease PUT without resourceVersion is 422; PUT of an absent Lease creates it', () => {
    const { ops } = world();
    const body = { metadata: { name: 'l' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } };
    const created = ops.update(leases, 'default', 'l', undefined, body, write);
    assert.equal(created.kind, 'Lease');
    const s = refusal(() => ops.update(leases, 'default', 'l', undefined, body, write));
    assert.equal(s.code, 422);
    assert.equal(
      s.message,
      'leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
  });

  test('PUT of an absent ConfigMap is 404', () => {
    const { ops } = world();
    const s = refusal(() => ops.update(configmaps, 'default', 'c', undefined, { metadata: { name: 'c' } }, write));
    assert.equal(s.code, 404);
    assert.equal(s.message, 'configmaps "c" not found');
  });
});

describe('delete', () => {
  test('a scheduled pod is deleted gracefully: deletionTimestamp now+grace, then stays', () => {
    const { ops, store } = world();
    ops.create(pods, 'default', podBody('a', { nodeName: 'n1' }), write);
    const out = ops.delete(pods, 'default', 'a', write) as KubeObject;
    assert.equal(out.metadata.deletionTimestamp, '2025-01-01T00:00:30Z');
    assert.equal(out.metadata.deletionGracePeriodSeconds, 30);
    assert.ok(store.get('pods', 'default', 'a'));
    // A second delete with a longer grace changes nothing; grace 0 finishes it.
    assert.equal(
      (ops.delete(pods, 'default', 'a', { ...write, gracePeriodSeconds: 60 }) as KubeObject).metadata.resourceVersion,
      out.metadata.resourceVersion,
    );
    ops.delete(pods, 'default', 'a', { ...write, gracePeriodSeconds: 0 });
    assert.equal(store.get('pods', 'default', 'a'), undefined);
  });

  test('an unscheduled pod goes at once: MODIFIED then DELETED', () => {
    const { ops, store, changes } = world();
    ops.create(pods, 'default', podBody('a'), write);
    changes.length = 0;
    ops.delete(pods, 'default', 'a', write);
    assert.deepEqual(
      changes.map((c) => c.type),
      ['MODIFIED', 'DELETED'],
    );
    assert.equal(store.get('pods', 'default', 'a'), undefined);
  });

  test('a uid precondition that does not match is 409', () => {
    const { ops } = world();
    ops.create(pods, 'default', podBody('a'), write);
    const s = refusal(() => ops.delete(pods, 'default', 'a', { ...write, preconditions: { uid: 'nope' } }));
    assert.equal(s.code, 409);
    assert.match(s.message!, /Precondition failed: UID in precondition: nope/);
  });

  test('other resources are removed at once with a Success Status; finalizers hold them', () => {
    const { ops, store } = world();
    ops.create(configmaps, 'default', { metadata: { name: 'c' } }, write);
    const s = ops.delete(configmaps, 'default', 'c', write) as Status;
    assert.equal(s.status, 'Success');
    assert.equal(s.details?.kind, 'configmaps');
    ops.create(configmaps, 'default', { metadata: { name: 'f', finalizers: ['x/y'] } }, write);
    const held = ops.delete(configmaps, 'default', 'f', write) as KubeObject;
    assert.ok(held.metadata.deletionTimestamp);
    assert.ok(store.get('configmaps', 'default', 'f'));
    ops.patch(
      configmaps,
      'default',
      'f',
      undefined,
      'application/merge-patch+json',
      '{"metadata":{"finalizers":null}}',
      write,
    );
    assert.equal(store.get('configmaps', 'default', 'f'), undefined);
  });

  test('dryRun writes nothing', () => {
    const { ops, store } = world();
    ops.create(pods, 'default', podBody('a'), { dryRun: true });
    assert.equal(store.get('pods', 'default', 'a'), undefined);
  });
});
