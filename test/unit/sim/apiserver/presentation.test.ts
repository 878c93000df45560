import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { negotiate } from '../../../../src/sim/apiserver/negotiate.js';
import { route } from '../../../../src/sim/apiserver/routing.js';
import { ApiError } from '../../../../src/sim/apiserver/status.js';
import { humanDuration } from '../../../../src/sim/apiserver/table/duration.js';
import { podCells } from '../../../../src/sim/apiserver/table/pods.js';
import type { KubeObject } from '../../../../src/sim/store.js';
import { isAuthorized } from '../../../../src/sim/apiserver/auth.js';

const NOW = new Date('2025-01-01T01:00:00Z');

describe('kubectl table cells for pods', () => {
  const base: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'd', creationTimestamp: '2025-01-01T00:00:00Z' },
    spec: {
      nodeName: 'n1',
      containers: [{ name: 'a' }, { name: 'b' }],
      readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }],
    },
    status: {
      phase: 'Running',
      podIP: '10.0.0.1',
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'kwave.dev/in-place-ready', status: 'False' },
      ],
      containerStatuses: [
        {
          name: 'a',
          ready: true,
          restartCount: 1,
          state: { running: {} },
          lastState: { terminated: { finishedAt: '2025-01-01T00:55:00Z' } },
        },
        { name: 'b', ready: false, restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } },
      ],
    },
  };

  test('READY, STATUS from a waiting reason, RESTARTS with the last restart age, AGE, wide columns', () => {
    assert.deepEqual(podCells(base, NOW), [
      'p',
      '1/2',
      'CrashLoopBackOff',
      '3 (5m ago)',
      '60m',
      '10.0.0.1',
      'n1',
      '<none>',
      '0/1',
    ]);
  });

  test('a pod being deleted is Terminating', () => {
    const p = { ...base, metadata: { ...base.metadata, deletionTimestamp: '2025-01-01T01:00:30Z' } };
    assert.equal(podCells(p, NOW)[2], 'Terminating');
  });

  test('a fresh pod is Pending with 0 restarts', () => {
    const p = { ...base, status: { phase: 'Pending' } };
    assert.deepEqual(podCells(p, NOW).slice(1, 4), ['0/2', 'Pending', '0']);
  });
});

describe('ages', () => {
  const cases: [number, string][] = [
    [5, '5s'],
    [119, '119s'],
    [125, '2m5s'],
    [600, '10m'],
    [3 * 3600 + 60, '3h1m'],
    [30 * 3600, '30h'],
    [50 * 3600, '2d2h'],
    [400 * 86400, '400d'],
    [3 * 365 * 86400, '3y'],
  ];
  for (const [s, expected] of cases)
    test(`${s}s is ${expected}`, () => assert.equal(humanDuration(s * 1000), expected));
});

describe('content negotiation', () => {
  test('kubectl get asks for a v1 Table', () => {
    assert.deepEqual(
      negotiate(
        'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
      ),
      { as: 'table', apiVersion: 'meta.k8s.io/v1' },
    );
  });
  test('plain JSON, */* or no Accept is the object', () => {
    for (const a of ['application/json', '*/*', undefined, 'application/vnd.kubernetes.protobuf, application/json'])
      assert.deepEqual(negotiate(a), { as: 'object' });
  });
  test('only protobuf is 406', () => {
    assert.throws(
      () => negotiate('application/vnd.kubernetes.protobuf'),
      (e: unknown) => e instanceof ApiError && e.status.code === 406,
    );
  });
});

describe('routing', () => {
  test('namespaced, cluster-scoped, all-namespace and subresource paths', () => {
    const r = route('/api/v1/namespaces/default/pods/web-1/status');
    assert.ok(
      r.kind === 'resource' &&
        r.info.plural === 'pods' &&
        r.namespace === 'default' &&
        r.name === 'web-1' &&
        r.subresource === 'status',
    );
    const all = route('/api/v1/pods');
    assert.ok(all.kind === 'resource' && all.namespace === undefined && all.name === undefined);
    const ns = route('/api/v1/namespaces/default');
    assert.ok(ns.kind === 'resource' && ns.info.plural === 'namespaces' && ns.name === 'default');
    const lease = route('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x');
    assert.ok(lease.kind === 'resource' && lease.info.kind === 'Lease');
    const w = route('/api/v1/watch/namespaces/default/pods');
    assert.ok(w.kind === 'resource' && w.watchPrefix);
  });
  test('unknown paths and resources in the wrong group are not found', () => {
    for (const p of [
      '/api/v1/leases',
      '/apis/apps/v1/leases',
      '/apis/coordination.k8s.io/v1/namespaces/default/deployments',
      '/apis/batch/v1/jobs',
      '/api/v1/namespaces/default/pods/a/exec',
      '/nope',
      '/api/v2',
    ])
      assert.equal(route(p).kind, 'notFound', p);
  });
  test('discovery paths', () => {
    assert.equal(route('/api').kind, 'apiVersions');
    assert.equal(route('/apis').kind, 'apiGroupList');
    assert.equal(route('/apis/coordination.k8s.io').kind, 'apiGroup');
    assert.equal(route('/apis/coordination.k8s.io/v1').kind, 'resourceList');
    assert.equal(route('/version').kind, 'version');
  });
});

describe('bearer token', () => {
  test('only the exact token passes', () => {
    assert.equal(isAuthorized('Bearer abc', 'abc'), true);
    assert.equal(isAuthorized('bearer abc', 'abc'), true);
    assert.equal(isAuthorized('Bearer abd', 'abc'), false);
    assert.equal(isAuthorized('Basic abc', 'abc'), false);
    assert.equal(isAuthorized(undefined, 'abc'), false);
  });
});
