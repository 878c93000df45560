// Runners whose clocks disagree with the cluster by two minutes. The one ahead sees a healthy lease
// as expired by its timestamps. It must not take it over while the holder keeps renewing (judged
// by watching the lease for a lease duration on its own clock), and must take over one that
// really stopped. And a runner behind the kubelet's clock counts a Ready pod at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Lease } from '@kubernetes/client-node';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { RunLock, type LockTimers } from '../../../src/lease/runLock.js';
import type { LeaseApi } from '../../../src/lease/leaseView.js';
import { KwaveError } from '../../../src/errors.js';

class Leases {
  lease: V1Lease | undefined;
  rv = 0;
  api(): LeaseApi {
    const copy = () => JSON.parse(JSON.stringify(this.lease)) as V1Lease;
    return {
      getLease: async () => {
        if (!this.lease) throw new KubeError(404, 'NotFound', 'not found');
        return copy();
      },
      createLease: async (_ns, body) => {
        if (this.lease) throw new KubeError(409, 'AlreadyExists', 'exists');
        this.lease = {
          ...JSON.parse(JSON.stringify(body)),
          metadata: { ...body.metadata, resourceVersion: String(++this.rv) },
        };
        return copy();
      },
      updateLease: async (_ns, body) => {
        if (body.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion)
          throw new KubeError(409, 'Conflict', 'modified');
        this.lease = {
          ...JSON.parse(JSON.stringify(body)),
          metadata: { ...body.metadata, resourceVersion: String(++this.rv) },
        };
        return copy();
      },
    };
  }
}

/** A clock `offsetMs` off real time; its intervals run when `tick` is called. */
class SkewedClock implements LockTimers {
  intervals = new Map<number, () => void>();
  private next = 1;
  constructor(
    private readonly shared: { t: number },
    private readonly offsetMs: number,
    private readonly onSleep: () => Promise<void> = async () => {},
  ) {}
  now = () => new Date(this.shared.t + this.offsetMs);
  setInterval = (fn: () => void) => {
    this.intervals.set(this.next, fn);
    return this.next++;
  };
  clearInterval = (h: unknown) => void this.intervals.delete(h as number);
  sleep = async (ms: number) => {
    for (let waited = 0; waited < ms; waited += 5_000) {
      this.shared.t += 5_000;
      await this.onSleep();
    }
    return true;
  };
}

const opts = (identity: string, timers: LockTimers) => ({
  namespace: 'ns',
  plan: 'web',
  identity,
  durationSeconds: 15,
  timers,
  holderGone: () => false,
});

test('a runner two minutes ahead does not take over a lease its holder keeps renewing', async () => {
  const leases = new Leases();
  const time = { t: Date.parse('2026-01-01T10:00:00Z') };
  const holderClock = new SkewedClock(time, 0);
  const holder = new RunLock(leases.api(), opts('alice@a pid 1', holderClock));
  await holder.acquire();
  // While the skewed runner watches the lease, the holder renews on schedule.
  const renewals = async () => {
    for (const fn of holderClock.intervals.values()) fn();
    await new Promise<void>((r) => setImmediate(r));
  };
  const ahead = new RunLock(leases.api(), opts('bob@b pid 2', new SkewedClock(time, 120_000, renewals)));
  await assert.rejects(
    ahead.acquire(),
    (err) => err instanceof KwaveError && err.code === 'LOCKED' && /alice@a pid 1/.test(err.message),
  );
  assert.equal(leases.lease?.spec?.holderIdentity, 'alice@a pid 1');
  assert.ok(holder.held);
});

test('a runner two minutes ahead takes over a lease that stopped being renewed, after watching it', async () => {
  const leases = new Leases();
  const time = { t: Date.parse('2026-01-01T10:00:00Z') };
  const holder = new RunLock(leases.api(), opts('alice@a pid 1', new SkewedClock(time, 0)));
  await holder.acquire(); // and never renews: its process is gone
  const ahead = new RunLock(leases.api(), opts('bob@b pid 2', new SkewedClock(time, 120_000)));
  const t0 = time.t;
  await ahead.acquire();
  assert.equal(leases.lease?.spec?.holderIdentity, 'bob@b pid 2');
  assert.ok(time.t - t0 >= 15_000, 'it watched the lease for a lease duration first');
});

test('a runner two minutes ahead that started while the holder ran is refused even if the holder releases meanwhile', async () => {
  const leases = new Leases();
  const time = { t: Date.parse('2026-01-01T10:00:00Z') };
  const holder = new RunLock(leases.api(), opts('alice@a pid 1', new SkewedClock(time, 0)));
  await holder.acquire();
  let released = false;
  const ahead = new RunLock(
    leases.api(),
    opts(
      'bob@b pid 2',
      new SkewedClock(time, 120_000, async () => {
        if (!released) await holder.release();
        released = true;
      }),
    ),
  );
  await assert.rejects(
    ahead.acquire(),
    (err) => err instanceof KwaveError && err.code === 'LOCKED' && /alice@a pid 1/.test(err.message),
  );
});

test('a runner two minutes behind sees a live lease as live', async () => {
  const leases = new Leases();
  const time = { t: Date.parse('2026-01-01T10:00:00Z') };
  const holder = new RunLock(leases.api(), opts('alice@a pid 1', new SkewedClock(time, 0)));
  await holder.acquire();
  const behind = new RunLock(leases.api(), opts('carol@c pid 3', new SkewedClock(time, -120_000)));
  await assert.rejects(behind.acquire(), (err) => err instanceof KwaveError && err.code === 'LOCKED');
});

test('a runner whose clock is two minutes behind the kubelet counts a Ready pod at once (minReadySeconds 0)', async () => {
  const { decide } = await import('../../../src/inplace/decide.js');
  const { encodeState, STATE_ANNOTATION } = await import('../../../src/inplace/state.js');
  const kubelet = Date.parse('2026-01-01T10:02:00Z');
  const runner = kubelet - 120_000;
  const oldID = `docker.io/library/nginx@sha256:${'a'.repeat(64)}`;
  const newID = `docker.io/library/nginx@sha256:${'b'.repeat(64)}`;
  const at = (ms: number) => new Date(ms).toISOString();
  const state = {
    plan: 'web',
    revision: 'r',
    wave: 1,
    startedAt: at(runner - 5_000),
    direction: 'upgrade' as const,
    containers: {
      nginx: {
        fromImage: 'nginx:1.14.2',
        fromImageID: oldID,
        fromContainerID: 'containerd://1',
        fromRestartCount: 0,
        toImage: 'nginx:1.25.3',
      },
    },
  };
  const pod = {
    metadata: {
      name: 'web-0',
      namespace: 'ns',
      uid: 'u',
      resourceVersion: '9',
      annotations: { [STATE_ANNOTATION]: encodeState(state) },
    },
    spec: {
      containers: [{ name: 'nginx', image: 'nginx:1.25.3' }],
      readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }],
    },
    status: {
      conditions: [
        { type: 'kwave.dev/in-place-ready', status: 'True', lastTransitionTime: at(runner - 1_000) },
        { type: 'Ready', status: 'True', lastTransitionTime: at(kubelet) },
      ],
      containerStatuses: [
        {
          name: 'nginx',
          image: 'docker.io/library/nginx:1.25.3',
          imageID: newID,
          containerID: 'containerd://2',
          restartCount: 1,
          ready: true,
          started: true,
          state: { running: { startedAt: at(kubelet - 500) } },
        },
      ],
    },
  };
  const ctx = {
    plan: 'web',
    revision: 'r',
    wave: 1,
    direction: 'upgrade' as const,
    containers: [{ name: 'nginx', image: 'nginx:1.25.3' }],
    gate: { conditionType: 'kwave.dev/in-place-ready', required: true },
    nowMs: runner,
    drainMs: 0,
    podTimeoutMs: 300_000,
    minReadyMs: 0,
  };
  assert.equal(decide(pod as never, ctx).kind, 'done');
});
