// src/cluster against the simulated API server, over HTTPS with the kubeconfig the simulator
// writes — the same path kwave takes to a real cluster. Pods are put straight into the store, and
// changed there, to play "someone else" (the kubelet, another client).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { connect, type ConnectOptions } from '../../src/cluster/connect.js';
import type { Cluster } from '../../src/cluster/cluster.js';
import { KubeError } from '../../src/cluster/kubeError.js';
import { PodCache, type PodChange } from '../../src/cluster/podCache.js';
import { startApiServer } from '../../src/sim/apiserver/index.js';
import { parseFaults, type Faults } from '../../src/sim/faults.js';
import { SimStats } from '../../src/sim/stats.js';
import { Store, type KubeObject } from '../../src/sim/store.js';
import { embeddedOnly } from './helpers/backend.js';

const GATE = 'kwave.dev/in-place-ready';

function makePod(name: string, namespace = 'default', labels: Record<string, string> = { app: 'demo' }, image = 'nginx:1.14.2'): KubeObject {
  const digest = 'a'.repeat(64);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: {
      nodeName: 'node-a',
      containers: [{ name: 'nginx', image }],
      readinessGates: [{ conditionType: GATE }],
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: GATE, status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' },
        { type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' },
      ],
      containerStatuses: [
        {
          name: 'nginx',
          image: `docker.io/library/${image}`,
          imageID: `docker.io/library/nginx@sha256:${digest}`,
          containerID: `containerd://${'c'.repeat(64)}`,
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: '2025-01-01T00:00:00Z' } },
        },
      ],
    },
  };
}

/** Changes a pod in the store the way another writer would (new resourceVersion, watch event). */
// The pod cache keeps only kwave's own annotations (kwave.dev/…): short keys here are under it.
const annotationKey = (key: string) => (key.includes('/') ? key : `kwave.dev/${key}`);

function touch(store: Store, namespace: string, name: string, annotations: Record<string, string>): KubeObject {
  const cur = store.get('pods', namespace, name)!;
  const next = structuredClone(cur) as KubeObject;
  next.metadata.annotations = { ...(next.metadata.annotations ?? {}), ...Object.fromEntries(Object.entries(annotations).map(([k, v]) => [annotationKey(k), v])) };
  return store.update('pods', next);
}

const annotation = (pod: V1Pod | undefined, key: string) => pod?.metadata?.annotations?.[annotationKey(key)];

interface Sim {
  store: Store;
  stats: SimStats;
  faults: Faults;
  kubeconfigFile: string;
  connect(options?: ConnectOptions): Cluster;
  close(): Promise<void>;
}

async function startSim(historySize?: number, faultSpec = ''): Promise<Sim> {
  const store = new Store(historySize === undefined ? {} : { historySize });
  const stats = new SimStats();
  const faults = parseFaults(faultSpec);
  const server = await startApiServer({ store, stats, faults, port: 0 });
  const dir = mkdtempSync(path.join(tmpdir(), 'kwave-cluster-e2e-'));
  const kubeconfigFile = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfigFile, server.kubeconfig());
  const clusters: Cluster[] = [];
  return {
    store,
    stats,
    faults,
    kubeconfigFile,
    connect(options = {}) {
      const c = connect({ kubeconfig: kubeconfigFile, env: {}, ...options });
      clusters.push(c);
      return c;
    },
    async close() {
      for (const c of clusters) c.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A sleep that returns at once and records the waits: retries without real time. */
function instantSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

describe('cluster requests against the simulated API server', { skip: embeddedOnly('drives the embedded API server over its own store with injected faults (the cluster module against kube-apiserver is covered by every other suite on the real pass)') }, () => {
  let sim: Sim;
  let cluster: Cluster;
  before(async () => {
    sim = await startSim();
    sim.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'web' } });
    for (let i = 0; i < 7; i++) sim.store.create('pods', makePod(`demo-${i}`));
    sim.store.create('pods', makePod('other-0', 'default', { app: 'other' }));
    sim.store.create('pods', makePod('web-0', 'web'));
    cluster = sim.connect();
  });
  after(() => sim.close());

  test('connects with the kubeconfig the simulator writes', () => {
    assert.match(cluster.server, /^https:\/\/127\.0\.0\.1:\d+$/);
  });

  test('lists pods page by page with a label selector', async () => {
    sim.stats.reset();
    const before = cluster.requests.total({ verb: 'list', resource: 'pods' });
    const list = await cluster.listPods('default', { labelSelector: 'app=demo', limit: 3 });
    assert.deepEqual(
      list.items.map((p) => p.metadata?.name),
      ['demo-0', 'demo-1', 'demo-2', 'demo-3', 'demo-4', 'demo-5', 'demo-6'],
    );
    assert.match(list.resourceVersion, /^\d+$/);
    assert.equal(cluster.requests.total({ verb: 'list', resource: 'pods' }) - before, 3);
    assert.equal(sim.stats.snapshot().requests['list pods'], 3);
  });

  test('gets a pod; a missing one is KubeError 404 NotFound', async () => {
    const pod = await cluster.getPod('web', 'web-0');
    assert.equal(pod.spec?.containers[0]?.image, 'nginx:1.14.2');
    await assert.rejects(cluster.getPod('web', 'nope'), (e: unknown) => e instanceof KubeError && e.code === 404 && e.reason === 'NotFound');
    assert.ok(cluster.requests.snapshot()['get pods 404']! >= 1);
  });

  test('the guarded image patch sets images and annotations; a stale resourceVersion is a 409, not retried', async () => {
    const pod = await cluster.getPod('default', 'demo-0');
    const rv = pod.metadata!.resourceVersion!;
    const patched = await cluster.patchPod('default', 'demo-0', { metadata: { resourceVersion: rv, annotations: { 'kwave.dev/in-place-state': '{"plan":"p"}' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] } });
    assert.equal(patched.spec?.containers[0]?.image, 'nginx:1.25.3');
    assert.equal(annotation(patched, 'kwave.dev/in-place-state'), '{"plan":"p"}');
    assert.notEqual(patched.metadata?.resourceVersion, rv);
    sim.stats.reset();
    await assert.rejects(
      cluster.patchPod('default', 'demo-0', { metadata: { resourceVersion: rv }, spec: { containers: [{ name: 'nginx', image: 'nginx:9' }] } }),
      (e: unknown) => e instanceof KubeError && e.code === 409 && e.reason === 'Conflict',
    );
    assert.equal(sim.stats.snapshot().requests['patch pods'], 1, 'a 409 goes back to the caller at once');
    assert.equal((sim.store.get('pods', 'default', 'demo-0')!.spec as { containers: { image: string }[] }).containers[0]!.image, 'nginx:1.25.3');
  });

  test('the condition patch merges one condition by type and keeps the others', async () => {
    const pod = await cluster.patchPodCondition('default', 'demo-1', { type: GATE, status: 'False', reason: 'InPlaceUpdate', message: 'kwave: upgrading' });
    const conditions = pod.status?.conditions ?? [];
    const gate = conditions.find((c) => c.type === GATE);
    assert.equal(gate?.status, 'False');
    assert.equal(gate?.reason, 'InPlaceUpdate');
    assert.ok(conditions.some((c) => c.type === 'ContainersReady'));
    assert.equal(pod.spec?.containers[0]?.image, 'nginx:1.14.2');
    assert.ok(cluster.requests.snapshot()['patch pods/status 200']! >= 1);
    // Sent again, unconditionally: same result, no error.
    const again = await cluster.patchPodCondition('default', 'demo-1', { type: GATE, status: 'False', reason: 'InPlaceUpdate' });
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
    const stored = sim.store.list('events', 'default').find((e) => e.metadata.name === ev.metadata?.name) as KubeObject & { reason?: string; involvedObject?: { uid?: string } };
    assert.equal(stored.reason, 'InPlaceUpdateFailed');
    assert.equal(stored.involvedObject?.uid, pod.metadata!.uid);
  });

  test('ConfigMap: create, conflict on a second create, update guarded by resourceVersion, merge patch', async () => {
    const created = await cluster.createConfigMap('web', { metadata: { name: 'kwave-p', namespace: 'web' }, data: { phase: 'Pending' } });
    await assert.rejects(cluster.createConfigMap('web', { metadata: { name: 'kwave-p' }, data: {} }), (e: unknown) => e instanceof KubeError && e.code === 409 && e.reason === 'AlreadyExists');
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
    await assert.rejects(cluster.getConfigMap('web', 'missing'), (e: unknown) => e instanceof KubeError && e.code === 404);
  });

  test('Lease: create, read back with microsecond times, update guarded by resourceVersion', async () => {
    const now = new Date('2025-05-06T07:08:09.123Z');
    const lease = await cluster.createLease('web', {
      metadata: { name: 'kwave-p', namespace: 'web' },
      spec: { holderIdentity: 'runner-a', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaseTransitions: 0 },
    });
    const raw = sim.store.get('leases', 'web', 'kwave-p') as KubeObject & { spec: { renewTime: string } };
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

describe('retries', { skip: embeddedOnly('drives the embedded API server over its own store with injected faults (the cluster module against kube-apiserver is covered by every other suite on the real pass)') }, () => {
  let sim: Sim;
  before(async () => {
    sim = await startSim();
    sim.store.create('pods', makePod('demo-0'));
  });
  after(() => sim.close());

  test('503s are retried until the request gets through', async () => {
    const s = instantSleep();
    const cluster = sim.connect({ deps: { sleep: s.sleep }, retry: { baseMs: 200, factor: 2, capMs: 5000, maxAttempts: 12, deadlineMs: 600_000 } });
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

  test("429 waits at least the server's Retry-After, then gives up after maxAttempts", async () => {
    const s = instantSleep();
    const cluster = sim.connect({ deps: { sleep: s.sleep } });
    sim.faults.errorCodes = [429];
    sim.faults.retryAfterSeconds = 2;
    sim.faults.errorRate = 1;
    try {
      await assert.rejects(cluster.getPod('default', 'demo-0'), (e: unknown) => e instanceof KubeError && e.code === 429 && e.retryAfterSeconds === 2);
    } finally {
      sim.faults.errorRate = 0;
    }
    assert.equal(cluster.requests.snapshot()['get pods 429'], 6);
    assert.equal(s.waits.length, 5);
    assert.ok(s.waits.every((ms) => ms >= 2000), `waits ${s.waits.join(',')}`);
  });

  test('a refused connection is retried, then surfaces as KubeError code 0 counted as "error"', async () => {
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
      await assert.rejects(cluster.getPod('default', 'x'), (e: unknown) => e instanceof KubeError && e.code === 0 && e.reason === 'ECONNREFUSED');
      assert.equal(cluster.requests.snapshot()['get pods error'], 6);
      assert.equal(s.waits.length, 5);
    } finally {
      cluster.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pod cache', { skip: embeddedOnly('drives the embedded API server over its own store with injected faults (the cluster module against kube-apiserver is covered by every other suite on the real pass)') }, () => {
  test('lists, then sees changes made by others through the watch, without polling', async () => {
    const sim = await startSim();
    try {
      sim.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'web' } });
      for (let i = 0; i < 3; i++) sim.store.create('pods', makePod(`demo-${i}`));
      sim.store.create('pods', makePod('other-0', 'default', { app: 'other' }));
      sim.store.create('pods', makePod('web-0', 'web'));
      const cluster = sim.connect();
      const cache = new PodCache(cluster, { namespaces: ['default', 'web'], labelSelector: 'app=demo' });
      try {
        await cache.synced;
        assert.deepEqual(cache.list().map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`), ['default/demo-0', 'default/demo-1', 'default/demo-2', 'web/web-0']);
        assert.deepEqual(cache.list('web').map((p) => p.metadata?.name), ['web-0']);
        const changes: string[] = [];
        cache.onChange((c) => changes.push(`${c.type} ${c.pod.metadata?.name} ${c.source}`));
        const waiting = cache.waitFor('default', 'demo-1', (p) => annotation(p, 'x') === '2', { timeoutMs: 10_000 });
        touch(sim.store, 'default', 'demo-1', { x: '1' });
        touch(sim.store, 'default', 'demo-1', { x: '2' });
        const pod = await waiting;
        assert.notEqual(typeof pod, 'string');
        assert.equal(annotation(pod as V1Pod, 'x'), '2');
        // waitFor is for pods the cache holds (an unknown pod is 'vanished'); a new pod shows up as a change.
        const added = new Promise<PodChange>((resolve) => cache.onChange((c) => c.pod.metadata?.name === 'demo-3' && resolve(c)));
        sim.store.create('pods', makePod('demo-3'));
        assert.equal((await added).type, 'added');
        assert.equal(cache.get('default', 'demo-3')?.metadata?.name, 'demo-3');
        assert.ok(changes.includes('modified demo-1 watch'));
        assert.ok(changes.includes('added demo-3 watch'));
        assert.equal(cache.get('default', 'other-0'), undefined, 'the selector is applied');
        assert.equal(cache.stats.lists, 2, 'one list per namespace');
        assert.equal(sim.stats.snapshot().requests['get pods'] ?? 0, 0, 'waiting made no GETs');
      } finally {
        cache.close();
      }
    } finally {
      await sim.close();
    }
  });

  test('waitFor: vanished on delete, vanished on a new uid, timeout, aborted', async () => {
    const sim = await startSim();
    try {
      for (let i = 0; i < 3; i++) sim.store.create('pods', makePod(`demo-${i}`));
      const cluster = sim.connect();
      const cache = new PodCache(cluster, { namespaces: ['default'], labelSelector: 'app=demo' });
      try {
        await cache.synced;
        const never = () => false;
        const uid0 = cache.get('default', 'demo-0')!.metadata!.uid!;
        const w0 = cache.waitFor('default', 'demo-0', never, { uid: uid0, timeoutMs: 10_000 });
        sim.store.remove('pods', 'default', 'demo-0');
        assert.equal(await w0, 'vanished');

        const uid1 = cache.get('default', 'demo-1')!.metadata!.uid!;
        const w1 = cache.waitFor('default', 'demo-1', never, { uid: uid1, timeoutMs: 10_000 });
        // Replaced under the same name (as a StatefulSet would): the watch says DELETED then ADDED.
        sim.store.remove('pods', 'default', 'demo-1');
        sim.store.create('pods', makePod('demo-1'));
        assert.equal(await w1, 'vanished');

        assert.equal(await cache.waitFor('default', 'demo-2', never, { timeoutMs: 200 }), 'timeout');

        const ac = new AbortController();
        const w2 = cache.waitFor('default', 'demo-2', never, { timeoutMs: 10_000, signal: ac.signal });
        ac.abort();
        assert.equal(await w2, 'aborted');

        assert.equal(await cache.waitFor('default', 'gone', never, { timeoutMs: 10_000 }), 'vanished');
        const w3 = cache.waitFor('default', 'demo-2', never, { timeoutMs: 10_000 });
        cache.close();
        assert.equal(await w3, 'aborted');
      } finally {
        cache.close();
      }
    } finally {
      await sim.close();
    }
  });

  test("kwave's own write is in the cache as soon as the request returns", async () => {
    const sim = await startSim();
    try {
      sim.store.create('pods', makePod('demo-0'));
      const cluster = sim.connect();
      const cache = new PodCache(cluster, { namespaces: ['default'] });
      try {
        await cache.synced;
        const before = cache.get('default', 'demo-0')!;
        const patched = await cluster.patchPodCondition('default', 'demo-0', { type: GATE, status: 'False', reason: 'InPlaceUpdate' });
        // No await between the response and this read: the watch cannot have delivered it yet.
        assert.equal(cache.get('default', 'demo-0')?.metadata?.resourceVersion, patched.metadata?.resourceVersion);
        assert.notEqual(patched.metadata?.resourceVersion, before.metadata?.resourceVersion);
        // An older object never replaces a newer one.
        assert.equal(cache.observe(before), false);
        assert.equal(cache.get('default', 'demo-0')?.metadata?.resourceVersion, patched.metadata?.resourceVersion);
        // getFresh reads through the API, and says undefined for a missing pod.
        assert.equal((await cache.getFresh('default', 'demo-0'))?.metadata?.name, 'demo-0');
        assert.equal(await cache.getFresh('default', 'nope'), undefined);
      } finally {
        cache.close();
      }
    } finally {
      await sim.close();
    }
  });

  test('survives watch cuts: resumes from the last resourceVersion without relisting', async () => {
    const sim = await startSim(undefined, 'watchCutSeconds=1');
    try {
      sim.store.create('pods', makePod('demo-0'));
      const cluster = sim.connect();
      const cache = new PodCache(cluster, { namespaces: ['default'] });
      try {
        await cache.synced;
        // Changes spread over several cuts; wait for each through the cache (event-driven).
        for (let i = 1; i <= 2; i++) {
          const seen = cache.waitFor('default', 'demo-0', (p) => annotation(p, 'n') === String(i), { timeoutMs: 10_000 });
          touch(sim.store, 'default', 'demo-0', { n: String(i) });
          assert.equal(typeof (await seen), 'object', `change ${i} seen`);
          // The next change falls after a cut: wait until the cache has opened a new watch.
          const watches = cache.stats.watches;
          const deadline = Date.now() + 60_000;
          while (cache.stats.watches === watches && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          assert.ok(cache.stats.watches > watches, `a new watch after the cut (watches: ${cache.stats.watches})`);
        }
        assert.ok(cache.stats.watches >= 2, `watches: ${cache.stats.watches}`);
        assert.equal(cache.stats.lists, 1, 'no relist after a cut');
        assert.equal(cache.stats.expired, 0);
      } finally {
        cache.close();
      }
    } finally {
      await sim.close();
    }
  });

  test('relists after 410 when its resourceVersion fell out of the history', async () => {
    const sim = await startSim(5, 'watchCutSeconds=1');
    try {
      sim.store.create('pods', makePod('demo-0'));
      sim.store.create('pods', makePod('demo-1'));
      const cluster = sim.connect({ deps: { sleep: (ms, signal) => new Promise((r) => { const t = setTimeout(r, Math.min(ms, 50)); signal?.addEventListener('abort', () => (clearTimeout(t), r())); }) } });
      const cache = new PodCache(cluster, { namespaces: ['default'], backoff: { baseMs: 50, factor: 2, capMs: 200 } });
      try {
        await cache.synced;
        // Keep the cache from watching: every request fails while the store moves on by more
        // than its 5-change history.
        const failed = new Promise<void>((resolve) => {
          const off = cache.onError(() => (off(), resolve()));
        });
        sim.faults.errorCodes = [503];
        sim.faults.errorRate = 1;
        await failed;
        for (let i = 0; i < 20; i++) touch(sim.store, 'default', 'demo-1', { n: String(i) });
        sim.store.remove('pods', 'default', 'demo-0');
        sim.faults.errorRate = 0;
        const seen = await cache.waitFor('default', 'demo-1', (p) => annotation(p, 'n') === '19', { timeoutMs: 15_000 });
        assert.equal(typeof seen, 'object');
        assert.equal(cache.get('default', 'demo-0'), undefined, 'the deletion is seen through the relist');
        assert.ok(cache.stats.expired >= 1, `expired: ${cache.stats.expired}`);
        assert.ok(cache.stats.lists >= 2, `lists: ${cache.stats.lists}`);
        assert.ok((cluster.requests.snapshot()['watch pods 503'] ?? 0) >= 1, 'refused watches are counted with their code');
      } finally {
        cache.close();
      }
    } finally {
      await sim.close();
    }
  });

  test('a first list that is refused for good rejects synced', async () => {
    const sim = await startSim();
    try {
      const cluster = sim.connect({ deps: { sleep: instantSleep().sleep } });
      sim.faults.errorCodes = [500];
      sim.faults.errorRate = 1;
      const cache = new PodCache(cluster, { namespaces: ['default'] });
      try {
        await assert.rejects(cache.synced, (e: unknown) => e instanceof KubeError && e.code === 500);
      } finally {
        cache.close();
        sim.faults.errorRate = 0;
      }
    } finally {
      await sim.close();
    }
  });
});
