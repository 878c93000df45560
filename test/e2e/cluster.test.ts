// src/cluster against an API server, over HTTPS with a kubeconfig — the same path kwave takes to
// a real cluster. The requests and the ConfigMap/Lease calls run
// on both backends (helpers/apiOnly.ts: the embedded API server, or kube-apiserver with no
// kubelet): pods are placed and changed through the API by an admin client, playing "someone
// else" (the kubelet, another client). Retries, watch cuts and 410s need injected API faults,
// which only the embedded API server has (no fault proxy in front of kube-apiserver): those
// tests stay embedded, with the store as the other writer.
// (The pod cache: pod-cache.test.ts.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from '../../src/cluster/connect.js';
import type { Cluster } from '../../src/cluster/cluster.js';
import { KubeError } from '../../src/cluster/kubeError.js';
import { DEFAULT_RETRY_POLICY } from '../../src/cluster/retry.js';
import type { KubeObject } from '../../src/sim/store.js';
import { BACKEND, noClusterOnReal } from './helpers/backend.js';
import {
  annotation,
  FAULTS_EMBEDDED,
  GATE,
  instantSleep,
  makePod,
  startApi,
  startSim,
  type Api,
  type Sim,
} from './helpers/clusterApi.js';

describe('cluster requests against the API server', () => {
  let sim: Api;
  let cluster: Cluster;
  before(async () => {
    sim = await startApi();
    await sim.namespace('web');
    for (let i = 0; i < 7; i++) await sim.putPod(`demo-${i}`);
    await sim.putPod('other-0', 'default', { app: 'other' });
    await sim.putPod('web-0', 'web');
    cluster = sim.connect();
  });
  after(() => sim?.close());

  test('connects with the kubeconfig the simulator writes', () => {
    assert.match(cluster.server, /^https:\/\/127\.0\.0\.1:\d+$/);
  });

  test('lists pods page by page with a label selector', async () => {
    sim.resetCounts();
    const before = cluster.requests.total({ verb: 'list', resource: 'pods' });
    const list = await cluster.listPods('default', { labelSelector: 'app=demo', limit: 3 });
    assert.deepEqual(
      list.items.map((p) => p.metadata?.name),
      ['demo-0', 'demo-1', 'demo-2', 'demo-3', 'demo-4', 'demo-5', 'demo-6'],
    );
    assert.match(list.resourceVersion, /^\d+$/);
    assert.equal(cluster.requests.total({ verb: 'list', resource: 'pods' }) - before, 3);
    const served = sim.counted('list pods');
    if (served !== undefined) assert.equal(served, 3);
  });

  test('gets a pod; a missing one is KubeError 404 NotFound', async () => {
    const pod = await cluster.getPod('web', 'web-0');
    assert.equal(pod.spec?.containers[0]?.image, 'nginx:1.14.2');
    await assert.rejects(
      cluster.getPod('web', 'nope'),
      (e: unknown) => e instanceof KubeError && e.code === 404 && e.reason === 'NotFound',
    );
    assert.ok(cluster.requests.snapshot()['get pods 404']! >= 1);
  });

  test('the guarded image patch sets images and annotations; a stale resourceVersion is a 409, not retried', async () => {
    const pod = await cluster.getPod('default', 'demo-0');
    const rv = pod.metadata!.resourceVersion!;
    const patched = await cluster.patchPod('default', 'demo-0', {
      metadata: { resourceVersion: rv, annotations: { 'kwave.dev/in-place-state': '{"plan":"p"}' } },
      spec: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] },
    });
    assert.equal(patched.spec?.containers[0]?.image, 'nginx:1.25.3');
    assert.equal(annotation(patched, 'kwave.dev/in-place-state'), '{"plan":"p"}');
    assert.notEqual(patched.metadata?.resourceVersion, rv);
    sim.resetCounts();
    await assert.rejects(
      cluster.patchPod('default', 'demo-0', {
        metadata: { resourceVersion: rv },
        spec: { containers: [{ name: 'nginx', image: 'nginx:9' }] },
      }),
      (e: unknown) => e instanceof KubeError && e.code === 409 && e.reason === 'Conflict',
    );
    const served = sim.counted('patch pods');
    if (served !== undefined) assert.equal(served, 1, 'a 409 goes back to the caller at once');
    assert.equal(cluster.requests.snapshot()['patch pods 409'], 1, 'sent once, not retried');
    const stored = await sim.get<KubeObject & { spec: { containers: { image: string }[] } }>(
      '/api/v1/namespaces/default/pods/demo-0',
    );
    assert.equal(stored.spec.containers[0]!.image, 'nginx:1.25.3');
  });

  test('the condition patch merges one condition by type and keeps the others', async () => {
    const pod = await cluster.patchPodCondition('default', 'demo-1', {
      type: GATE,
      status: 'False',
      reason: 'InPlaceUpdate',
      message: 'kwave: upgrading',
    });
    const conditions = pod.status?.conditions ?? [];
    const gate = conditions.find((c) => c.type === GATE);
    assert.equal(gate?.status, 'False');
    assert.equal(gate?.reason, 'InPlaceUpdate');
    assert.ok(conditions.some((c) => c.type === 'ContainersReady'));
    assert.equal(pod.spec?.containers[0]?.image, 'nginx:1.14.2');
    assert.ok(cluster.requests.snapshot()['patch pods/status 200']! >= 1);
    // Sent again, unconditionally: same result, no error.
    const again = await cluster.patchPodCondition('default', 'demo-1', {
      type: GATE,
      status: 'False',
      reason: 'InPlaceUpdate',
    });
    assert.equal(again.status?.conditions?.find((c) => c.type === GATE)?.status, 'False');
  });

  test('creates an Event on a pod', async () => {
    const pod = await cluster.getPod('default', 'demo-2');
    const ev = await cluster.createEvent({
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'demo-2', namespace: 'default', uid: pod.metadata!.uid! },
      type: 'Warning',
      reason: 'InPlaceUpdateFailed',
      message: 'ErrImagePull: pull failed',
    });
    assert.match(ev.metadata?.name ?? '', /^demo-2\.[0-9a-f]+$/);
    const stored = await sim.get<KubeObject & { reason?: string; involvedObject?: { uid?: string } }>(
      `/api/v1/namespaces/default/events/${ev.metadata!.name!}`,
    );
    assert.equal(stored.reason, 'InPlaceUpdateFailed');
    assert.equal(stored.involvedObject?.uid, pod.metadata!.uid);
  });

  test('ConfigMap: create, conflict on a second create, update guarded by resourceVersion, merge patch', async () => {
    const created = await cluster.createConfigMap('web', {
      metadata: { name: 'kwave-p', namespace: 'web' },
      data: { phase: 'Pending' },
    });
    await assert.rejects(
      cluster.createConfigMap('web', { metadata: { name: 'kwave-p' }, data: {} }),
      (e: unknown) => e instanceof KubeError && e.code === 409 && e.reason === 'AlreadyExists',
    );
    const got = await cluster.getConfigMap('web', 'kwave-p');
    assert.equal(got.data?.phase, 'Pending');
    const updated = await cluster.updateConfigMap('web', { ...got, data: { phase: 'Progressing' } });
    assert.equal(updated.data?.phase, 'Progressing');
    await assert.rejects(
      cluster.updateConfigMap('web', { ...created, data: { phase: 'Halted' } }),
      (e: unknown) => e instanceof KubeError && e.code === 409,
    );
    const patched = await cluster.patchConfigMap('web', 'kwave-p', { data: { wave: '2', phase: null } });
    assert.deepEqual(patched.data, { wave: '2' });
    await assert.rejects(
      cluster.getConfigMap('web', 'missing'),
      (e: unknown) => e instanceof KubeError && e.code === 404,
    );
  });

  test('Lease: create, read back with microsecond times, update guarded by resourceVersion', async () => {
    const now = new Date('2025-05-06T07:08:09.123Z');
    const lease = await cluster.createLease('web', {
      metadata: { name: 'kwave-p', namespace: 'web' },
      spec: {
        holderIdentity: 'runner-a',
        leaseDurationSeconds: 15,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      },
    });
    // As stored and served: a MicroTime, six digits of fraction.
    const raw = await sim.get<KubeObject & { spec: { renewTime: string } }>(
      '/apis/coordination.k8s.io/v1/namespaces/web/leases/kwave-p',
    );
    assert.equal(raw.spec.renewTime, '2025-05-06T07:08:09.123000Z');
    const got = await cluster.getLease('web', 'kwave-p');
    assert.ok(got.spec?.renewTime instanceof Date);
    assert.equal(got.spec?.renewTime?.getTime(), now.getTime());
    const later = new Date(now.getTime() + 5000);
    const renewed = await cluster.updateLease('web', { ...got, spec: { ...got.spec, renewTime: later } });
    assert.equal(renewed.spec?.renewTime?.getTime(), later.getTime());
    await assert.rejects(
      cluster.updateLease('web', { ...lease, spec: { ...lease.spec, holderIdentity: 'runner-b' } }),
      (e: unknown) => e instanceof KubeError && e.code === 409,
    );
  });
});

describe('retries', () => {
  let sim: Sim;
  before(async () => {
    if (BACKEND === 'real') return;
    sim = await startSim();
    sim.store.create('pods', makePod('demo-0'));
  });
  after(() => sim?.close());

  test('503s are retried until the request gets through', { skip: FAULTS_EMBEDDED }, async () => {
    const s = instantSleep();
    const cluster = sim.connect({
      deps: { sleep: s.sleep },
      retry: { baseMs: 200, factor: 2, capMs: 5000, maxAttempts: 12, deadlineMs: 600_000 },
    });
    sim.faults.errorCodes = [503];
    sim.faults.errorRate = 0.3;
    try {
      for (let i = 0; i < 20; i++) assert.equal((await cluster.getPod('default', 'demo-0')).metadata?.name, 'demo-0');
    } finally {
      sim.faults.errorRate = 0;
    }
    const counts = cluster.requests.snapshot();
    assert.equal(counts['get pods 200'], 20);
    assert.equal(counts['get pods 503'] ?? 0, s.waits.length, 'one wait per failed attempt');
    assert.equal(sim.stats.snapshot().requests['get pods'], 20 + (counts['get pods 503'] ?? 0));
  });

  test(
    "429 waits at least the server's Retry-After, then gives up after maxAttempts",
    { skip: FAULTS_EMBEDDED },
    async () => {
      const s = instantSleep();
      const cluster = sim.connect({ deps: { sleep: s.sleep } });
      sim.faults.errorCodes = [429];
      sim.faults.retryAfterSeconds = 2;
      sim.faults.errorRate = 1;
      try {
        await assert.rejects(
          cluster.getPod('default', 'demo-0'),
          (e: unknown) => e instanceof KubeError && e.code === 429 && e.retryAfterSeconds === 2,
        );
      } finally {
        sim.faults.errorRate = 0;
      }
      assert.equal(cluster.requests.snapshot()['get pods 429'], DEFAULT_RETRY_POLICY.maxAttempts);
      assert.equal(s.waits.length, DEFAULT_RETRY_POLICY.maxAttempts - 1);
      assert.ok(
        s.waits.every((ms) => ms >= 2000),
        `waits ${s.waits.join(',')}`,
      );
    },
  );

  test(
    'a refused connection is retried, then surfaces as KubeError code 0 counted as "error"',
    { skip: noClusterOnReal },
    async () => {
      const s = instantSleep();
      const dir = mkdtempSync(path.join(tmpdir(), 'kwave-refused-'));
      const file = path.join(dir, 'kubeconfig');
      // Port 1 on loopback: nothing listens there.
      writeFileSync(
        file,
        `apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context:\n    cluster: x\n    user: u\ncurrent-context: c\n`,
      );
      const cluster = connect({ kubeconfig: file, env: {}, deps: { sleep: s.sleep } });
      try {
        await assert.rejects(
          cluster.getPod('default', 'x'),
          (e: unknown) => e instanceof KubeError && e.code === 0 && e.reason === 'ECONNREFUSED',
        );
        assert.equal(cluster.requests.snapshot()['get pods error'], DEFAULT_RETRY_POLICY.maxAttempts);
        assert.equal(s.waits.length, DEFAULT_RETRY_POLICY.maxAttempts - 1);
      } finally {
        cluster.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
