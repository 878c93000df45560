// src/cluster's pod cache against an API server: the first list, the watch that follows other
// writers' changes, waitFor's outcomes and kwave's own writes, on both backends (the admin client
// as the other writer); watch cuts, 410 relists and a refused first list need injected API
// faults, which only the embedded API server has (no fault proxy in front of kube-apiserver).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { KubeError } from '../../src/cluster/kubeError.js';
import { PodCache, type PodChange } from '../../src/cluster/podCache.js';
import {
  annotation,
  FAULTS_EMBEDDED,
  GATE,
  instantSleep,
  makePod,
  startApi,
  startSim,
  touch,
} from './helpers/clusterApi.js';

describe('pod cache', () => {
  test('lists, then sees changes made by others through the watch, without polling', async () => {
    const sim = await startApi();
    try {
      await sim.namespace('web');
      for (let i = 0; i < 3; i++) await sim.putPod(`demo-${i}`);
      await sim.putPod('other-0', 'default', { app: 'other' });
      await sim.putPod('web-0', 'web');
      const cluster = sim.connect();
      const cache = new PodCache(cluster, { namespaces: ['default', 'web'], labelSelector: 'app=demo' });
      try {
        await cache.synced;
        assert.deepEqual(
          cache.list().map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`),
          ['default/demo-0', 'default/demo-1', 'default/demo-2', 'web/web-0'],
        );
        assert.deepEqual(
          cache.list('web').map((p) => p.metadata?.name),
          ['web-0'],
        );
        const changes: string[] = [];
        cache.onChange((c) => changes.push(`${c.type} ${c.pod.metadata?.name} ${c.source}`));
        const waiting = cache.waitFor('default', 'demo-1', (p) => annotation(p, 'x') === '2', { timeoutMs: 10_000 });
        await sim.touch('default', 'demo-1', { x: '1' });
        await sim.touch('default', 'demo-1', { x: '2' });
        const pod = await waiting;
        assert.notEqual(typeof pod, 'string');
        assert.equal(annotation(pod as V1Pod, 'x'), '2');
        // waitFor is for pods the cache holds (an unknown pod is 'vanished'); a new pod shows up as a change.
        const added = new Promise<PodChange>((resolve) =>
          cache.onChange((c) => c.pod.metadata?.name === 'demo-3' && resolve(c)),
        );
        await sim.putPod('demo-3');
        assert.equal((await added).type, 'added');
        assert.equal(cache.get('default', 'demo-3')?.metadata?.name, 'demo-3');
        assert.ok(changes.includes('modified demo-1 watch'));
        assert.ok(changes.includes('added demo-3 watch'));
        assert.equal(cache.get('default', 'other-0'), undefined, 'the selector is applied');
        assert.equal(cache.stats.lists, 2, 'one list per namespace');
        // Counted by the server where it can say at once (embedded), else by kwave's client.
        assert.equal(
          sim.counted('get pods') ?? cluster.requests.total({ verb: 'get', resource: 'pods' }),
          0,
          'waiting made no GETs',
        );
      } finally {
        cache.close();
      }
    } finally {
      await sim.close();
    }
  });

  test('waitFor: vanished on delete, vanished on a new uid, timeout, aborted', async () => {
    const sim = await startApi();
    try {
      for (let i = 0; i < 3; i++) await sim.putPod(`demo-${i}`);
      const cluster = sim.connect();
      const cache = new PodCache(cluster, { namespaces: ['default'], labelSelector: 'app=demo' });
      try {
        await cache.synced;
        const never = () => false;
        const uid0 = cache.get('default', 'demo-0')!.metadata!.uid!;
        const w0 = cache.waitFor('default', 'demo-0', never, { uid: uid0, timeoutMs: 10_000 });
        await sim.removePod('default', 'demo-0');
        assert.equal(await w0, 'vanished');

        const uid1 = cache.get('default', 'demo-1')!.metadata!.uid!;
        const w1 = cache.waitFor('default', 'demo-1', never, { uid: uid1, timeoutMs: 10_000 });
        // Replaced under the same name (as a StatefulSet would): the watch says DELETED then ADDED.
        await sim.removePod('default', 'demo-1');
        await sim.putPod('demo-1');
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
    const sim = await startApi();
    try {
      await sim.putPod('demo-0');
      const cluster = sim.connect();
      const cache = new PodCache(cluster, { namespaces: ['default'] });
      try {
        await cache.synced;
        const before = cache.get('default', 'demo-0')!;
        const patched = await cluster.patchPodCondition('default', 'demo-0', {
          type: GATE,
          status: 'False',
          reason: 'InPlaceUpdate',
        });
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

  test(
    'survives watch cuts: resumes from the last resourceVersion without relisting',
    { skip: FAULTS_EMBEDDED },
    async () => {
      const sim = await startSim(undefined, 'watchCutSeconds=1');
      try {
        sim.store.create('pods', makePod('demo-0'));
        const cluster = sim.connect();
        const cache = new PodCache(cluster, { namespaces: ['default'] });
        try {
          await cache.synced;
          // Changes spread over several cuts; wait for each through the cache (event-driven).
          for (let i = 1; i <= 2; i++) {
            const seen = cache.waitFor('default', 'demo-0', (p) => annotation(p, 'n') === String(i), {
              timeoutMs: 10_000,
            });
            touch(sim.store, 'default', 'demo-0', { n: String(i) });
            assert.equal(typeof (await seen), 'object', `change ${i} seen`);
            // The next change falls after a cut: wait until the cache has opened a new watch.
            const watches = cache.stats.watches;
            const deadline = Date.now() + 60_000;
            while (cache.stats.watches === watches && Date.now() < deadline)
              await new Promise((r) => setTimeout(r, 20));
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
    },
  );

  test('relists after 410 when its resourceVersion fell out of the history', { skip: FAULTS_EMBEDDED }, async () => {
    const sim = await startSim(5, 'watchCutSeconds=1');
    try {
      sim.store.create('pods', makePod('demo-0'));
      sim.store.create('pods', makePod('demo-1'));
      const cluster = sim.connect({
        deps: {
          sleep: (ms, signal) =>
            new Promise<boolean>((r) => {
              const t = setTimeout(() => r(true), Math.min(ms, 50));
              signal?.addEventListener('abort', () => (clearTimeout(t), r(false)));
            }),
        },
      });
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
        const seen = await cache.waitFor('default', 'demo-1', (p) => annotation(p, 'n') === '19', {
          timeoutMs: 15_000,
        });
        assert.equal(typeof seen, 'object');
        assert.equal(cache.get('default', 'demo-0'), undefined, 'the deletion is seen through the relist');
        assert.ok(cache.stats.expired >= 1, `expired: ${cache.stats.expired}`);
        assert.ok(cache.stats.lists >= 2, `lists: ${cache.stats.lists}`);
        assert.ok(
          (cluster.requests.snapshot()['watch pods 503'] ?? 0) >= 1,
          'refused watches are counted with their code',
        );
      } finally {
        cache.close();
      }
    } finally {
      await sim.close();
    }
  });

  test('a first list that is refused for good rejects synced', { skip: FAULTS_EMBEDDED }, async () => {
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
