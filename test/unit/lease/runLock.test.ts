// The run lock (the plan's Lease next to its record): acquire, refuse naming the holder, take
// over an expired lease, renew with the resourceVersion guard, notice a takeover, release.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Lease } from '@kubernetes/client-node';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { ExitCode, KwaveError } from '../../../src/errors.js';
import { RunLock, type LockTimers } from '../../../src/lease/runLock.js';
import { acquireWaiting } from '../../../src/lease/acquireWaiting.js';
import { describeHolder, leaseView, type LeaseApi } from '../../../src/lease/leaseView.js';
import { holderGone } from '../../../src/lease/runnerIdentity.js';

class FakeLeases {
  lease: V1Lease | undefined;
  rv = 0;
  updates = 0;
  /** The next updates answer this way instead: 'hang' never answers, 'applied-409' applies the write and answers 409 (a repeated request whose first attempt landed), a KubeError is thrown. */
  next: ('hang' | 'applied-409' | KubeError)[] = [];
  limits: (number | undefined)[] = [];
  private put(body: V1Lease): V1Lease {
    // Stored as JSON, as a server sees it: times as the strings the client serialised.
    this.lease = JSON.parse(
      JSON.stringify({ ...body, metadata: { ...body.metadata, resourceVersion: String(++this.rv) } }),
    ) as V1Lease;
    return JSON.parse(JSON.stringify(this.lease)) as V1Lease;
  }
  api(): LeaseApi {
    return {
      getLease: async () => {
        if (!this.lease) throw new KubeError(404, 'NotFound', 'not found');
        return JSON.parse(JSON.stringify(this.lease)) as V1Lease;
      },
      createLease: async (_ns, body) => {
        if (this.lease)
          throw new KubeError(409, 'AlreadyExists', 'leases.coordination.k8s.io "kwave-web" already exists');
        return this.put(body);
      },
      updateLease: async (_ns, body, options) => {
        this.updates++;
        this.limits.push(options?.withinMs);
        const answer = this.next.shift();
        if (answer === 'hang') return new Promise<V1Lease>(() => undefined);
        if (answer instanceof KubeError) throw answer;
        if (answer === 'applied-409') {
          this.put(body);
          throw new KubeError(409, 'Conflict', 'modified');
        }
        if (!body.metadata?.resourceVersion)
          throw new KubeError(422, 'Invalid', 'metadata.resourceVersion: must be specified for an update');
        if (body.metadata.resourceVersion !== this.lease?.metadata?.resourceVersion)
          throw new KubeError(409, 'Conflict', 'modified');
        return this.put(body);
      },
    };
  }
}

class Clock implements LockTimers {
  t = Date.parse('2025-03-01T10:00:00.000Z');
  intervals: { fn: () => void; ms: number; id: number }[] = [];
  now = () => new Date(this.t);
  setInterval = (fn: () => void, ms: number) => {
    const id = this.intervals.length + 1;
    this.intervals.push({ fn, ms, id });
    return id;
  };
  clearInterval = (h: unknown) => {
    this.intervals = this.intervals.filter((i) => i.id !== h);
  };
  sleep = async (ms: number) => {
    this.t += ms;
    return true;
  };
  async tick(ms: number) {
    this.t += ms;
    for (const i of this.intervals) i.fn();
    await new Promise<void>((r) => setImmediate(r));
  }
}

function lock(server: FakeLeases, clock: Clock, identity: string, onLost?: (m: string) => void, told?: string[]) {
  const tell = told ? (m: string) => void told.push(m) : undefined;
  return new RunLock(server.api(), {
    namespace: 'ns',
    plan: 'web',
    identity,
    durationSeconds: 15,
    timers: clock,
    onLost,
    ...(tell ? { onDoubt: tell, onConfirmed: tell } : {}),
  });
}

/** Whether `p` has settled, and with what, after the microtasks now queued. */
async function settled<T>(p: Promise<T>): Promise<{ value: T } | undefined> {
  let out: { value: T } | undefined;
  void p.then((value) => (out = { value }));
  await new Promise<void>((r) => setImmediate(r));
  return out;
}

describe('RunLock', () => {
  test('acquire creates the lease with holder, duration and microsecond times', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const a = lock(server, clock, 'alice@h pid 1');
    await a.acquire();
    assert.equal(a.held, true);
    assert.equal(server.lease?.spec?.holderIdentity, 'alice@h pid 1');
    assert.equal(server.lease?.spec?.leaseDurationSeconds, 15);
    assert.equal(server.lease?.spec?.leaseTransitions, 0);
    assert.match(JSON.stringify(server.lease?.spec?.renewTime), /"2025-03-01T10:00:00\.000000Z"/);
    assert.equal(clock.intervals[0]?.ms, 1000, 'looks at the clock every 15th of the duration (leaseRenewal.ts)');
  });

  test('a second runner is refused with LOCKED (exit 2) naming the holder and the renewal', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    await lock(server, clock, 'alice@h pid 1').acquire();
    clock.t += 3000;
    const err = await lock(server, clock, 'bob@h pid 2')
      .acquire()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof KwaveError);
    assert.equal(err.code, 'LOCKED');
    assert.equal(err.exitCode, 2);
    assert.match(err.message, /alice@h pid 1/);
    assert.match(err.message, /renewed 3s ago/);
  });

  test('an expired lease is taken over, counting a transition', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const a = lock(server, clock, 'alice@h pid 1');
    await a.acquire();
    clock.clearInterval(1); // alice's process died: no more renewals
    clock.t += 16_000;
    const b = lock(server, clock, 'bob@h pid 2');
    await b.acquire();
    assert.equal(server.lease?.spec?.holderIdentity, 'bob@h pid 2');
    assert.equal(server.lease?.spec?.leaseTransitions, 1);
    assert.equal(b.abandonedBy, 'alice@h pid 1', 'the holder that never released it is named');
  });

  test('renewal carries the resourceVersion; a takeover is reported once through onLost', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const lost: string[] = [];
    const a = lock(server, clock, 'alice@h pid 1', (m) => lost.push(m));
    await a.acquire();
    await clock.tick(5000);
    assert.equal(server.updates, 1);
    assert.equal(leaseView(server.lease!, clock.now()).renewedAt?.getTime(), clock.t);
    // Someone else writes the lease (as after a long stall of ours).
    server.lease = {
      ...server.lease!,
      spec: { ...server.lease!.spec, holderIdentity: 'bob' },
      metadata: { ...server.lease!.metadata, resourceVersion: '99' },
    };
    await clock.tick(5000);
    await clock.tick(5000);
    assert.equal(lost.length, 1);
    assert.match(lost[0]!, /another runner took it over/);
    assert.equal(a.held, false);
    await a.release();
    assert.equal(server.lease?.spec?.holderIdentity, 'bob', 'release leaves a lease we lost alone');
  });

  test('a renewal that never answers: the lease is in doubt at the renew deadline (12 s), not after the duration; writes wait', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const lost: string[] = [];
    const told: string[] = [];
    const a = lock(server, clock, 'alice@h pid 1', (m) => lost.push(m), told);
    await a.acquire();
    assert.deepEqual(await settled(a.confirmed()), { value: true }, 'held: a write goes out at once');
    server.next.push('hang');
    for (let s = 1; s <= 11; s++) await clock.tick(1000);
    assert.equal(server.updates, 1, 'one renewal, at 3 s, never doubled while it hangs');
    assert.deepEqual(server.limits, [9000], 'it may take until the renew deadline');
    assert.ok(a.held);
    await clock.tick(1000);
    assert.equal(a.held, false);
    assert.equal(lost.length, 0, 'in doubt is not lost');
    assert.equal(a.lost, undefined);
    assert.match(
      told[0]!,
      /could not renew the lease ns\/kwave-web within 12s: no answer; pod and record writes wait until it is confirmed ours again \(another runner may take it over 15s after the last renewal\)/,
    );
    assert.equal(await settled(a.confirmed()), undefined, 'a write waits');
  });

  test('in doubt through an API server outage: reclaimed once it answers and the lease still names us; waiting writes go on', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const lost: string[] = [];
    const told: string[] = [];
    // The server is down from 1 s to 30 s: every renewal and reclaim is refused.
    const down = new KubeError(503, 'ServiceUnavailable', 'connection refused');
    const api = server.api();
    let up = true;
    const reads: number[] = [];
    const flaky: LeaseApi = {
      ...api,
      getLease: async (ns, name, options) => {
        reads.push(clock.t);
        if (!up) throw down;
        return api.getLease(ns, name, options);
      },
      updateLease: async (ns, body, options) => {
        if (!up) throw down;
        return api.updateLease(ns, body, options);
      },
    };
    const b = new RunLock(flaky, {
      namespace: 'ns',
      plan: 'web',
      identity: 'alice@h pid 1',
      durationSeconds: 15,
      timers: clock,
      onLost: (m) => lost.push(m),
      onDoubt: (m) => told.push(m),
      onConfirmed: (m) => told.push(m),
    });
    await b.acquire();
    assert.deepEqual(await settled(b.confirmed()), { value: true });
    up = false;
    reads.length = 0;
    for (let s = 1; s <= 12; s++) await clock.tick(1000);
    assert.equal(told.length, 1, 'in doubt at 12 s');
    const waiting = b.confirmed();
    for (let s = 13; s <= 30; s++) await clock.tick(1000);
    assert.ok(reads.length >= 8, `reclaimed every 2 s while down (${reads.length} reads)`);
    assert.equal(await settled(waiting), undefined, 'still waiting while the server is down');
    up = true;
    await clock.tick(2000);
    assert.deepEqual(await settled(waiting), { value: true }, 'the waiting write goes on');
    assert.ok(b.held);
    assert.equal(lost.length, 0);
    assert.match(
      told[1]!,
      /the lease ns\/kwave-web is confirmed ours again after \d+s in doubt \(nobody took it over\); writes go on/,
    );
    assert.equal(leaseView(server.lease!, clock.now()).renewedAt?.getTime(), clock.t, 'renewed by the reclaim');
    assert.equal(leaseView(server.lease!, clock.now()).holder, 'alice@h pid 1');
    await clock.tick(3000);
    assert.equal(
      leaseView(server.lease!, clock.now()).renewedAt?.getTime(),
      clock.t,
      'and renewed on schedule after it',
    );
  });

  test('in doubt, and another runner took the lease over meanwhile: lost, waiting writes refused, the lease left alone', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const lost: string[] = [];
    const a = lock(server, clock, 'alice@h pid 1', (m) => lost.push(m), []);
    await a.acquire();
    for (let i = 0; i < 7; i++) server.next.push(new KubeError(503, 'ServiceUnavailable', 'busy'));
    for (let s = 1; s <= 12; s++) await clock.tick(1000);
    const waiting = a.confirmed();
    // Bob finds it expired, watches it unchanged for a duration, and takes it over.
    clock.t += 20_000;
    const b = lock(server, clock, 'bob@h pid 2');
    server.next.length = 0;
    await b.acquire();
    await clock.tick(1000);
    assert.deepEqual(await settled(waiting), { value: false }, 'the waiting write is refused');
    assert.equal(lost.length, 1);
    assert.match(
      lost[0]!,
      /lost the lease ns\/kwave-web while it could not be renewed: another runner took it over \(it names bob@h pid 2 now\)/,
    );
    assert.deepEqual(await settled(a.confirmed()), { value: false });
    await a.release();
    assert.equal(server.lease?.spec?.holderIdentity, 'bob@h pid 2', "release leaves bob's lease alone");
  });

  test('a reclaim racing a takeover (409 on its guarded update) reads again and finds the lease lost', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const lost: string[] = [];
    const a = lock(server, clock, 'alice@h pid 1', (m) => lost.push(m), []);
    await a.acquire();
    for (let i = 0; i < 6; i++) server.next.push(new KubeError(503, 'ServiceUnavailable', 'busy'));
    for (let s = 1; s <= 12; s++) await clock.tick(1000);
    assert.equal(a.held, false);
    // The reclaim's read still names alice; bob's takeover lands between that read and its update.
    const bob = { ...server.lease!, spec: { ...server.lease!.spec, holderIdentity: 'bob@h pid 2' } };
    server.next.push(new KubeError(409, 'Conflict', 'modified'));
    await clock.tick(1000);
    assert.equal(lost.length, 0, 'a 409 alone does not say who holds it');
    server.lease = { ...bob, metadata: { ...bob.metadata, resourceVersion: String(++server.rv) } };
    await clock.tick(2000);
    assert.equal(lost.length, 1);
    assert.equal(server.lease.spec?.holderIdentity, 'bob@h pid 2');
  });

  test('a failed renewal is repeated every 2 s; one that succeeds keeps the lease', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const lost: string[] = [];
    const a = lock(server, clock, 'alice@h pid 1', (m) => lost.push(m));
    await a.acquire();
    server.next.push(
      new KubeError(503, 'ServiceUnavailable', 'busy'),
      new KubeError(503, 'ServiceUnavailable', 'busy'),
    );
    for (let s = 1; s <= 7; s++) await clock.tick(1000);
    assert.equal(server.updates, 3, 'at 3, 5 and 7 s');
    assert.deepEqual(server.limits, [9000, 7000, 5000]);
    await clock.tick(3000); // 10 s: renewed at 7 s, due again at 10 s
    assert.equal(lost.length, 0);
    assert.ok(a.held);
    assert.equal(leaseView(server.lease!, clock.now()).renewedAt?.getTime(), clock.t, 'renewed at 10 s');
  });

  test('failures until the renew deadline: in doubt, naming the last error; release still clears a lease that names us', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const lost: string[] = [];
    const told: string[] = [];
    const a = lock(server, clock, 'alice@h pid 1', (m) => lost.push(m), told);
    await a.acquire();
    for (let i = 0; i < 6; i++) server.next.push(new KubeError(503, 'ServiceUnavailable', 'busy'));
    for (let s = 1; s <= 12; s++) await clock.tick(1000);
    assert.equal(lost.length, 0);
    assert.match(told[0]!, /within 12s: busy/);
    assert.equal(a.held, false);
    // The server answers again and nobody took the lease: release still clears it, so the next
    // run need not wait for it to expire (chaos seed 1487476101 left it held after the last run).
    server.next.length = 0;
    await a.release();
    assert.equal(server.lease?.spec?.holderIdentity, undefined);
    assert.deepEqual(await settled(a.confirmed()), { value: false }, 'released: no write of the holder goes out');
  });

  test('a 409 from our own repeated renewal (the first attempt landed) keeps the lease', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const lost: string[] = [];
    const a = lock(server, clock, 'alice@h pid 1', (m) => lost.push(m));
    await a.acquire();
    server.next.push('applied-409');
    await clock.tick(5000);
    assert.equal(lost.length, 0, 'the lease still names us: not lost');
    assert.ok(a.held);
    await clock.tick(5000);
    assert.equal(server.updates, 2, 'the next renewal carries the version it read back');
    assert.equal(leaseView(server.lease!, clock.now()).renewedAt?.getTime(), clock.t);
    assert.equal(lost.length, 0);
  });

  test('release clears the holder, so the next run needs not wait for expiry', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    const a = lock(server, clock, 'alice@h pid 1');
    await a.acquire();
    await a.release();
    assert.equal(server.lease?.spec?.holderIdentity, undefined);
    assert.equal(clock.intervals.length, 0);
    const b = lock(server, clock, 'bob@h pid 2');
    await b.acquire();
    assert.equal(server.lease?.spec?.holderIdentity, 'bob@h pid 2');
    assert.equal(b.abandonedBy, undefined, 'a released lease was abandoned by no one');
  });
});

describe('holderGone', () => {
  test('only a holder on this host whose pid no longer exists is gone', () => {
    const alive = (pid: number) => pid === 42;
    assert.equal(holderGone('alice@box pid 7 pidns 11 #ab12cd', 'box', alive, '11'), true);
    assert.equal(holderGone('alice@box pid 42 pidns 11 #ab12cd', 'box', alive, '11'), false);
    assert.equal(
      holderGone('alice@other pid 7 pidns 11 #ab12cd', 'box', alive, '11'),
      false,
      'another host cannot be checked',
    );
    assert.equal(
      holderGone('alice@box pid 7 pidns 12 #ab12cd', 'box', alive, '11'),
      false,
      'a pid of another PID namespace (a container) cannot be checked',
    );
    assert.equal(holderGone('some-controller', 'box', alive, '11'), false);
    assert.equal(
      holderGone(`me@box pid ${process.pid} pidns 11 #ab12cd`, 'box', () => false, '11'),
      false,
      'never ourselves',
    );
  });

  test('a lease of a killed runner on this host is taken over before it expires', async () => {
    const server = new FakeLeases();
    const clock = new Clock();
    await lock(server, clock, 'alice@box pid 7').acquire();
    const b = new RunLock(server.api(), {
      namespace: 'ns',
      plan: 'web',
      identity: 'bob@box pid 8',
      timers: clock,
      holderGone: (id) => id === 'alice@box pid 7',
    });
    await b.acquire();
    assert.equal(server.lease?.spec?.holderIdentity, 'bob@box pid 8');
    assert.equal(server.lease?.spec?.leaseTransitions, 1);
  });
});

describe('leaseView', () => {
  test('expiry is renewTime + leaseDurationSeconds', () => {
    const lease: V1Lease = {
      spec: { holderIdentity: 'x', leaseDurationSeconds: 10, renewTime: '2025-03-01T10:00:00.000000Z' as never },
    };
    assert.equal(leaseView(lease, new Date('2025-03-01T10:00:09Z')).expired, false);
    assert.equal(leaseView(lease, new Date('2025-03-01T10:00:11Z')).expired, true);
    assert.equal(leaseView({ spec: {} }, new Date()).free, true);
    assert.match(
      describeHolder(leaseView(lease, new Date('2025-03-01T10:00:11Z')), new Date('2025-03-01T10:00:11Z')),
      /^x \(renewed 11s ago.*expired/,
    );
  });
});

describe('acquireWaiting (--lease-wait)', () => {
  const locked = () =>
    new KwaveError('LOCKED', 'plan "p" is already being run by x. Wait for that run to end', ExitCode.BAD_INPUT);
  test('retries while the lease is held, until it is free', async () => {
    let t = 0;
    let attempts = 0;
    const said: string[] = [];
    await acquireWaiting(
      {
        acquire: async () => {
          if (++attempts < 4) throw locked();
        },
      },
      { waitMs: 60_000, now: () => t, sleep: async (ms) => void (t += ms), onWait: (m) => said.push(m) },
    );
    assert.equal(attempts, 4);
    assert.deepEqual(said, ['plan "p" is already being run by x; waiting up to 60s for it (--lease-wait)']);
  });
  test('refuses once the wait is over, and at once for other errors or no wait', async () => {
    let t = 0;
    await assert.rejects(
      acquireWaiting(
        {
          acquire: async () => {
            throw locked();
          },
        },
        { waitMs: 10_000, now: () => t, sleep: async (ms) => void (t += ms) },
      ),
      /already being run/,
    );
    assert.ok(t >= 10_000 && t < 12_000);
    let attempts = 0;
    await assert.rejects(
      acquireWaiting(
        {
          acquire: async () => {
            attempts++;
            throw locked();
          },
        },
        { waitMs: 0 },
      ),
      /already being run/,
    );
    assert.equal(attempts, 1);
    await assert.rejects(
      acquireWaiting(
        {
          acquire: async () => {
            attempts++;
            throw new Error('boom');
          },
        },
        { waitMs: 60_000 },
      ),
      /boom/,
    );
    assert.equal(attempts, 2);
  });
});
