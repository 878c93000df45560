// The lease's requests have a lane of their own: with the pod lane's token bucket deep in debt
// (pod requests waiting on a sleep that the test never ends), a lease renewal still goes out and
// is answered. Against the simulated API server; the clock and every timer are the test's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { Cluster } from '../../../src/cluster/cluster.js';
import { RunLock, type LockTimers } from '../../../src/lease/runLock.js';
import { startSim } from '../../../src/sim/index.js';

describe('Cluster control lane', () => {
  test('a lease renewal goes out while pod requests wait behind the rate limit', async () => {
    const sim = await startSim({ pods: 2 });
    let t = Date.parse('2026-01-01T10:00:00Z');
    const waitingOnSleep: number[] = [];
    // Every wait the bucket asks for is recorded and never ends (until the test closes the cluster).
    const sleep = (ms: number, signal?: AbortSignal) =>
      new Promise<boolean>((resolve) => {
        waitingOnSleep.push(ms);
        signal?.addEventListener('abort', () => resolve(false), { once: true });
      });
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    const cluster = new Cluster(kc, { rateLimit: { qps: 1, burst: 1 }, deps: { now: () => t, sleep } });
    const reader = new Cluster(kc); // another client, to look at the lease
    const intervals: (() => void)[] = [];
    const timers: LockTimers = {
      now: () => new Date(t),
      setInterval: (fn) => intervals.push(fn),
      clearInterval: () => undefined,
    };
    try {
      const lock = new RunLock(cluster, { namespace: 'default', plan: 'lane', identity: 'alice@h pid 1', timers });
      await lock.acquire();
      const before = await reader.getLease('default', 'kwave-lane');

      // Saturate the pod lane: one GET takes the only token, 20 more wait on the bucket.
      const pods = Array.from({ length: 21 }, () => cluster.getPod('default', 'demo-0').catch(() => undefined));
      await new Promise<void>((resolve) => {
        const check = () => (waitingOnSleep.length >= 20 ? resolve() : setImmediate(check));
        check();
      });
      await pods[0];

      const renewed = new Promise<number | string>((resolve) =>
        cluster.requests.onRequest((r) => r.verb === 'update' && r.resource === 'leases' && resolve(r.code)),
      );
      t += 5_000; // the renewal is due; the pod lane is still 15 tokens in debt at 1 qps
      for (const fn of intervals) fn();
      assert.equal(String(await renewed), '200');
      assert.equal(cluster.requests.total({ verb: 'get', resource: 'pods' }), 1, 'the pod requests still wait');
      assert.equal(waitingOnSleep.length, 20, 'the renewal did not wait on the bucket');
      const after = await reader.getLease('default', 'kwave-lane');
      assert.notEqual(after.metadata?.resourceVersion, before.metadata?.resourceVersion);
      assert.ok(lock.held);
      cluster.close();
      await Promise.all(pods);
    } finally {
      cluster.close();
      reader.close();
      await sim.close();
    }
  });
});
