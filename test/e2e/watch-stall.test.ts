// A watch over a connection that stops delivering without closing (half-open: a proxy, a NAT or a
// peer that lost it), through a TCP proxy on loopback in front of the API server of either
// backend. kwave's pod cache must notice within its liveness deadline (no event, no bookmark),
// watch again from the last version it saw, and so receive the change made meanwhile; an idle but
// healthy watch must never be cut. The detection time is printed, not asserted beyond a generous
// bound (the wait's own timeout).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeError } from '../../src/cluster/kubeError.js';
import { watchConfigMap } from '../../src/cluster/configMapWatch.js';
import { PodCache } from '../../src/cluster/podCache.js';
import { DEFAULT_WATCH_LIVENESS_SECONDS } from '../../src/cluster/watchLiveness.js';
import { annotation, startApi, type Api } from './helpers/clusterApi.js';

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  stalled: boolean;
  /** When kwave closed its end of a stalled connection. */
  clientClosedAt?: number;
}

/** Forwards bytes both ways until `stall()`: then the connections open at that moment deliver nothing and never close. */
async function startStallProxy(target: { host: string; port: number }) {
  const pairs = new Set<Pair>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const pair: Pair = { client, upstream, stalled: false };
    pairs.add(pair);
    client.on('data', (d) => pair.stalled || upstream.write(d));
    upstream.on('data', (d) => pair.stalled || client.write(d));
    client.on('close', () => {
      if (pair.stalled) pair.clientClosedAt = Date.now();
      upstream.destroy();
    });
    // A stalled connection hides the server's end from the client: that is the fault.
    upstream.on('close', () => pair.stalled || client.destroy());
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    open: () => [...pairs].filter((p) => !p.client.destroyed).length,
    /** Stalls every connection open now; returns them. */
    stall(): Pair[] {
      const open = [...pairs].filter((p) => !p.client.destroyed);
      for (const p of open) p.stalled = true;
      return open;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const p of pairs) {
          p.client.destroy();
          p.upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

/** The API server's kubeconfig with its server moved to the proxy (same host: the certificate still fits). */
const SERVER = /server: *"?https:\/\/(127\.0\.0\.1):(\d+)"?/;

function proxiedKubeconfig(api: Api, proxyPort: number): string {
  const text = readFileSync(api.api.kubeconfigPath, 'utf8');
  const path = join(api.api.dir, 'kubeconfig-proxied');
  writeFileSync(path, text.replace(SERVER, `server: https://127.0.0.1:${proxyPort}`), { mode: 0o600 });
  return path;
}

describe('a watch over a half-open connection', () => {
  let api: Api;
  let target: { host: string; port: number };
  before(async () => {
    api = await startApi();
    await api.putPod('demo-0');
    const m = SERVER.exec(readFileSync(api.api.kubeconfigPath, 'utf8'));
    assert.ok(m, 'the kubeconfig names a loopback server');
    target = { host: m[1]!, port: Number(m[2]) };
  });
  after(async () => {
    await api.close();
  });

  test('is noticed within the liveness deadline and watched again: the change made meanwhile arrives', async () => {
    const proxy = await startStallProxy(target);
    const cache = new PodCache(api.connect({ kubeconfig: proxiedKubeconfig(api, proxy.port) }), {
      namespaces: ['default'],
      labelSelector: 'app=demo',
    });
    const errors: KubeError[] = [];
    cache.onError((err) => errors.push(err));
    try {
      await cache.synced;
      // The watch is open and delivering.
      const live = cache.waitFor('default', 'demo-0', (p) => annotation(p, 'step') === 'before', { timeoutMs: 30_000 });
      await api.touch('default', 'demo-0', { step: 'before' });
      assert.notEqual(typeof (await live), 'string', 'the watch delivers before the stall');
      const { lists, watches } = cache.stats;

      const stalled = proxy.stall();
      const stalledAt = Date.now();
      assert.ok(stalled.length >= 1, 'the watch connection is stalled');
      // Through a client that does not go through the proxy: kwave's watch must fetch it.
      await api.touch('default', 'demo-0', { step: 'during' });
      const seen = await cache.waitFor('default', 'demo-0', (p) => annotation(p, 'step') === 'during', {
        timeoutMs: 90_000,
      });
      const detectedMs = Date.now() - stalledAt;
      console.log(
        `watch stall: the change made during the stall arrived ${(detectedMs / 1000).toFixed(1)}s after it (liveness deadline ${DEFAULT_WATCH_LIVENESS_SECONDS}s)`,
      );
      assert.notEqual(typeof seen, 'string', `the change made during the stall arrived (${String(seen)})`);
      assert.equal(annotation(seen as V1Pod, 'step'), 'during');
      assert.ok(cache.stats.watches > watches, 'watched again');
      assert.equal(cache.stats.lists, lists, 'resumed from the last version, not listed again');
      assert.ok(
        errors.some((e) => /silent for \d+s \(no event, no bookmark\)/.test(e.message)),
        `the silence was the reason (${errors.map((e) => e.message).join('; ')})`,
      );
      // kwave itself ended the stalled connection: the proxy never closed it.
      assert.ok(
        stalled.some((p) => p.clientClosedAt !== undefined),
        'kwave closed the stalled connection',
      );
    } finally {
      cache.close();
      await proxy.close();
    }
  });

  test("the rollout record's watch too: the write made during the stall arrives", async () => {
    const proxy = await startStallProxy(target);
    const path = '/api/v1/namespaces/default/configmaps';
    await api.api.http.request('POST', path, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'stall-record' },
      data: { step: 'before' },
    });
    const stop = new AbortController();
    const steps: (string | undefined)[] = [];
    const errors: KubeError[] = [];
    let arrived: (() => void) | undefined;
    const during = new Promise<void>((resolve) => (arrived = resolve));
    const watching = watchConfigMap(
      api.connect({ kubeconfig: proxiedKubeconfig(api, proxy.port) }),
      'default',
      'stall-record',
      (cm) => {
        steps.push(cm?.data?.step);
        if (cm?.data?.step === 'during') arrived?.();
      },
      { signal: stop.signal, onError: (err) => errors.push(err) },
    );
    try {
      while (steps.length === 0) await new Promise((r) => setTimeout(r, 50));
      // The read's connection, then the watch's.
      while (proxy.open() < 2) await new Promise((r) => setTimeout(r, 50));
      const stalled = proxy.stall();
      const stalledAt = Date.now();
      assert.ok(stalled.length >= 1);
      await api.api.http.request(
        'PATCH',
        `${path}/stall-record`,
        { data: { step: 'during' } },
        'application/merge-patch+json',
      );
      const bound = setTimeout(() => arrived?.(), 90_000);
      await during;
      clearTimeout(bound);
      console.log(
        `record watch stall: the write arrived ${((Date.now() - stalledAt) / 1000).toFixed(1)}s after the stall`,
      );
      assert.deepEqual(steps, ['before', 'during']);
      assert.ok(
        errors.some((e) => /silent for \d+s/.test(e.message)),
        errors.map((e) => e.message).join('; '),
      );
    } finally {
      stop.abort();
      await watching;
      await proxy.close();
    }
  });

  test('an idle but healthy watch is never cut, whatever the bookmarks: the server ends it first', async () => {
    const proxy = await startStallProxy(target);
    // A short deadline, so that many streams come and go within the test: each ends by its
    // timeout (55–75% of the deadline) before the deadline, with no event in between.
    const cache = new PodCache(api.connect({ kubeconfig: proxiedKubeconfig(api, proxy.port) }), {
      namespaces: ['default'],
      labelSelector: 'app=demo',
      watchLivenessSeconds: 8,
    });
    const errors: KubeError[] = [];
    cache.onError((err) => errors.push(err));
    try {
      await cache.synced;
      const { lists } = cache.stats;
      await new Promise((r) => setTimeout(r, 20_000));
      assert.deepEqual(
        errors.map((e) => e.message),
        [],
        'no stream was cut',
      );
      assert.ok(cache.stats.watches >= 3, `the server ended streams by their timeout (${cache.stats.watches} watches)`);
      assert.equal(cache.stats.lists, lists, 'never listed again');
    } finally {
      cache.close();
      await proxy.close();
    }
  });
});
