// RecordStore's write discipline against an in-memory ConfigMap "server" with resourceVersions:
// throttled writes (latest wins), flushes, and 409s that must not lose approvals.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { newRecord, STATUS_KEY, type RolloutRecord } from '../../../src/record/record.js';
import { approvalKey, decodeRecord, encodeApproval } from '../../../src/record/codec.js';
import { RecordStore, type RecordApi, type Timers } from '../../../src/record/store.js';

/** One ConfigMap store: create / get / update with resourceVersion checks, like the API server. */
class FakeConfigMaps {
  objects = new Map<string, V1ConfigMap>();
  rv = 0;
  calls: string[] = [];
  /** Runs before the next update is applied (to play another writer). */
  beforeUpdate?: () => void;

  key(ns: string, name: string) {
    return `${ns}/${name}`;
  }
  put(ns: string, cm: V1ConfigMap): V1ConfigMap {
    const stored = structuredClone({
      ...cm,
      metadata: { ...cm.metadata, namespace: ns, resourceVersion: String(++this.rv) },
    });
    this.objects.set(this.key(ns, cm.metadata!.name!), stored);
    return structuredClone(stored);
  }
  /** Another writer merges keys in (as `kwave approve` does). */
  mergeData(ns: string, name: string, data: Record<string, string>) {
    const cur = this.objects.get(this.key(ns, name)) ?? { metadata: { name } };
    this.put(ns, { ...cur, data: { ...cur.data, ...data } });
  }
  api(): RecordApi {
    return {
      watchConfigMaps: () => {
        throw new Error('these tests do not watch the record');
      },
      getConfigMap: async (ns, name) => {
        this.calls.push('get');
        const cm = this.objects.get(this.key(ns, name));
        if (!cm) throw new KubeError(404, 'NotFound', `configmaps "${name}" not found`);
        return structuredClone(cm);
      },
      createConfigMap: async (ns, body) => {
        this.calls.push('create');
        if (this.objects.has(this.key(ns, body.metadata!.name!))) throw new KubeError(409, 'AlreadyExists', 'exists');
        return this.put(ns, body);
      },
      updateConfigMap: async (ns, body) => {
        this.calls.push('update');
        const hook = this.beforeUpdate;
        this.beforeUpdate = undefined;
        hook?.();
        const cur = this.objects.get(this.key(ns, body.metadata!.name!));
        if (!cur) throw new KubeError(404, 'NotFound', 'not found');
        if (body.metadata?.resourceVersion !== cur.metadata?.resourceVersion)
          throw new KubeError(409, 'Conflict', 'the object has been modified');
        return this.put(ns, body);
      },
    };
  }
}

/** Manual clock and timers. */
class FakeTimers implements Timers {
  t = 0;
  timers: { at: number; fn: () => void; id: number }[] = [];
  private next = 1;
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = this.next++;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  };
  clearTimeout = (h: unknown) => {
    this.timers = this.timers.filter((x) => x.id !== h);
  };
  async advance(ms: number) {
    this.t += ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= this.t).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      due.fn();
      await settle();
    }
    await settle();
  }
}

const settle = () => new Promise<void>((r) => setImmediate(r));

function record(wave = 0): RolloutRecord {
  return {
    ...newRecord({ plan: 'web', revision: 'r1', planText: 'plan', holder: 'me', now: '2025-01-01T00:00:00.000Z' }),
    wave,
  };
}

function setup(throttleMs = 1000) {
  const server = new FakeConfigMaps();
  const timers = new FakeTimers();
  const errors: KubeError[] = [];
  const store = new RecordStore(server.api(), {
    namespace: 'ns',
    plan: 'web',
    throttleMs,
    timers,
    onError: (e) => errors.push(e),
  });
  const stored = () => {
    const d = decodeRecord(server.objects.get('ns/kwave-web')!);
    assert.ok(d.ok);
    return d.ok ? d.record : undefined!;
  };
  return { server, timers, store, stored, errors };
}

describe('RecordStore', () => {
  test('load: undefined before the first run; create then load round-trips', async () => {
    const { store } = setup();
    assert.equal(await store.load(), undefined);
    await store.create(record(1));
    const loaded = await store.load();
    assert.ok(loaded?.ok);
    if (loaded?.ok) assert.equal(loaded.record.wave, 1);
  });

  test('throttles: many saves within the interval make one more write, of the latest state', async () => {
    const { store, server, timers, stored } = setup(1000);
    await store.create(record(0));
    const afterCreate = server.calls.length;
    for (let w = 1; w <= 20; w++) await store.save(record(w));
    await settle();
    assert.equal(server.calls.length, afterCreate, 'nothing written before the interval has passed');
    await timers.advance(1000);
    assert.deepEqual(server.calls.slice(afterCreate), ['update']);
    assert.equal(stored().wave, 20);
    assert.equal(store.writeCount, 2);
  });

  test('flush writes at once, and a flushed save is not written twice', async () => {
    const { store, server, timers, stored } = setup(1000);
    await store.create(record(0));
    await store.save(record(5));
    await store.save(record(6), { flush: true });
    assert.equal(stored().wave, 6);
    const n = server.calls.length;
    await timers.advance(5000);
    assert.equal(server.calls.length, n, 'the pending timer found nothing left to write');
    await store.save(record(7));
    await store.flush();
    assert.equal(stored().wave, 7);
  });

  test('a key written by someone else between two runner writes survives (409, re-read, re-apply only status.json)', async () => {
    const { store, server, stored } = setup(0);
    await store.create(record(1));
    server.beforeUpdate = () => server.mergeData('ns', 'kwave-web', { 'note.example': 'theirs' });
    await store.save(record(2), { flush: true });
    assert.deepEqual(server.calls, ['create', 'update', 'get', 'update']);
    const cm = server.objects.get('ns/kwave-web')!;
    assert.equal(cm.data?.['note.example'], 'theirs', 'their key kept');
    assert.equal(stored().wave, 2);
  });

  test("create finds the ConfigMap already there (an earlier run): it updates instead, dropping an earlier kwave's decisions", async () => {
    const { store, server, stored } = setup();
    server.put('ns', {
      metadata: { name: 'kwave-web' },
      data: {
        [approvalKey(3)]: encodeApproval({ by: 'bob', at: 'then' }),
        'control.json': '{"history":[]}',
        'note.example': 'kept',
        [STATUS_KEY]: 'old',
      },
    });
    await store.create(record(4));
    assert.deepEqual(server.calls, ['create', 'get', 'update']);
    assert.equal(stored().wave, 4);
    assert.deepEqual(Object.keys(server.objects.get('ns/kwave-web')!.data!).sort(), [
      'note.example',
      'plan.yaml',
      STATUS_KEY,
    ]);
  });

  test('apply folds events and flushes transitions', async () => {
    const { store, stored } = setup(60_000);
    await store.create(record(0));
    await store.apply({
      time: '2025-01-01T00:00:01.000Z',
      plan: 'web',
      event: 'wave-start',
      wave: 1,
      waves: 2,
      pods: 1,
      target: 1,
    });
    assert.equal(stored().wave, 1, 'wave-start written at once');
    await store.apply({ time: '2025-01-01T00:00:02.000Z', plan: 'web', event: 'pod-start', wave: 1, pod: 'ns/p' });
    assert.equal(stored().inFlight.length, 0, 'pod-start waits for the throttle');
    await store.flush();
    assert.equal(stored().inFlight.length, 1);
  });

  test('feed: events given synchronously are folded in order and written', async () => {
    const { store, stored } = setup(60_000);
    await store.create(record(0));
    const at = (s: number) => `2025-01-01T00:00:0${s}.000Z`;
    store.feed({ time: at(1), plan: 'web', event: 'wave-start', wave: 1, waves: 2, pods: 2, target: 2 });
    store.feed({ time: at(2), plan: 'web', event: 'pod-start', wave: 1, pod: 'ns/a' });
    store.feed({ time: at(3), plan: 'web', event: 'pod-start', wave: 1, pod: 'ns/b' });
    store.feed({
      time: at(4),
      plan: 'web',
      event: 'pod-end',
      wave: 1,
      pod: 'ns/a',
      result: 'failed',
      reason: 'X',
      message: 'm',
      durationMs: 1,
    });
    await store.flush();
    assert.deepEqual(
      stored().inFlight.map((p) => p.pod),
      ['ns/b'],
    );
    assert.equal(stored().failures[0]?.pod, 'ns/a');
    assert.equal(stored().wave, 1);
  });

  test('a failed throttled write is reported and retried with the next write', async () => {
    const { store, server, timers, errors, stored } = setup(1000);
    await store.create(record(0));
    let fail = true;
    // The next write fails once, as an overloaded server would.
    const original = server.put.bind(server);
    server.put = (ns, cm) => {
      if (fail) {
        fail = false;
        throw new KubeError(503, 'ServiceUnavailable', 'down');
      }
      return original(ns, cm);
    };
    await store.save(record(1));
    await timers.advance(1000);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.code, 503);
    await timers.advance(1000);
    assert.equal(stored().wave, 1);
  });

  test("isApproved reads the decisions ConfigMap's approval key, ignores one given for another revision, and one in the record itself", async () => {
    const { store, server } = setup();
    await store.create(record(1));
    assert.equal(await store.isApproved(1), undefined, 'no decisions ConfigMap yet');
    // An earlier kwave's approval, kept in the record: the runner may write the record, so it does not count.
    server.mergeData('ns', 'kwave-web', {
      [approvalKey(1)]: encodeApproval({ by: 'mallory', at: 't', revision: 'r1' }),
    });
    assert.equal(await store.isApproved(1), undefined);
    server.mergeData('ns', 'kwave-web.control', {
      [approvalKey(1)]: encodeApproval({ by: 'alice', user: 'alice', at: 't', revision: 'r1' }),
    });
    server.mergeData('ns', 'kwave-web.control', {
      [approvalKey(2)]: encodeApproval({ by: 'alice', at: 't', revision: 'r0' }),
    });
    assert.deepEqual(await store.isApproved(1), { by: 'alice', user: 'alice', at: 't', revision: 'r1' });
    assert.equal(await store.isApproved(2), undefined);
  });
});
