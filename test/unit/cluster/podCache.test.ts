// PodCache paths the simulator produces only rarely or slowly (bookmarks, an ERROR 410 event in
// the middle of a stream, events racing kwave's own writes), driven step by step through a
// scripted pod source. The full list+watch against the real simulated API server is in
// test/e2e/cluster.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { ListPodsOptions, PodList, PodWatchEvent, WatchPodsQuery } from '../../../src/cluster/cluster.js';
import type { PodObserver } from '../../../src/cluster/clusterOptions.js';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { PodCache, type PodChange, type PodSource } from '../../../src/cluster/podCache.js';

const pod = (name: string, rv: string, uid = `uid-${name}`, extra: Record<string, string> = {}): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', resourceVersion: rv, uid, annotations: extra },
});

interface OpenWatch {
  query: WatchPodsQuery;
  send(event: PodWatchEvent): void;
  end(err?: KubeError): void;
  aborted: boolean;
}

/** A pod source whose lists are queued by the test and whose watches the test drives. */
class ScriptedSource implements PodSource {
  lists: PodList[] = [];
  listCalls = 0;
  watches: OpenWatch[] = [];
  private watchWaiters: ((w: OpenWatch) => void)[] = [];
  private observers = new Set<PodObserver>();

  async listPods(_ns: string, _o?: ListPodsOptions): Promise<PodList> {
    this.listCalls++;
    const next = this.lists.shift();
    if (!next) throw new Error('test did not queue a list');
    return next;
  }
  async getPod(): Promise<V1Pod> {
    throw new KubeError(404, 'NotFound', 'not found');
  }
  onPodObserved(o: PodObserver): () => void {
    this.observers.add(o);
    return () => this.observers.delete(o);
  }
  written(p: V1Pod) {
    for (const o of this.observers) o.observe(p);
  }
  async watchPods(
    _ns: string,
    query: WatchPodsQuery,
    onEvent: (e: PodWatchEvent) => void,
    onDone: (e?: KubeError) => void,
  ) {
    let done = false;
    const w: OpenWatch = {
      query,
      aborted: false,
      send: (e) => !done && onEvent(e),
      end: (err) => {
        if (done) return;
        done = true;
        onDone(err);
      },
    };
    this.watches.push(w);
    for (const waiter of this.watchWaiters.splice(0)) waiter(w);
    return {
      abort: () => {
        w.aborted = true;
        w.end(new KubeError(0, 'Timeout', 'aborted'));
      },
    };
  }
  /** The n-th watch (0-based), once it is opened. */
  watch(n: number): Promise<OpenWatch> {
    if (this.watches[n]) return Promise.resolve(this.watches[n]!);
    return new Promise((resolve) => {
      const check = () => (this.watches[n] ? resolve(this.watches[n]!) : this.watchWaiters.push(check));
      this.watchWaiters.push(check);
    });
  }
}

/** Short sleeps (back-off) pass at once and are recorded; long ones (timeouts, watchdog) wait for their abort. */
function fakeSleep() {
  const waits: number[] = [];
  const sleep = (ms: number, signal?: AbortSignal) => {
    if (ms < 60_000) {
      waits.push(ms);
      return new Promise<boolean>((r) => setImmediate(() => r(true)));
    }
    return new Promise<boolean>((r) => {
      if (signal?.aborted) return r(false);
      signal?.addEventListener('abort', () => r(false), { once: true });
    });
  };
  return { waits, sleep };
}

function setup() {
  const source = new ScriptedSource();
  const time = fakeSleep();
  const make = () =>
    new PodCache(source, {
      namespaces: ['ns'],
      deps: { sleep: time.sleep, random: () => 0, now: () => 0 },
      watchTimeoutSeconds: 300,
      minWatchMs: 0,
    });
  return { source, time, make };
}

describe('PodCache (scripted source)', () => {
  test('watches from the list version and resumes from the last bookmark', async () => {
    const { source, make } = setup();
    source.lists.push({ items: [pod('a', '10')], resourceVersion: '10' });
    const cache = make();
    await cache.synced;
    const w0 = await source.watch(0);
    assert.equal(w0.query.resourceVersion, '10');
    assert.equal(w0.query.allowWatchBookmarks, true);
    w0.send({ type: 'MODIFIED', pod: pod('a', '12', 'uid-a', { k: 'v' }) });
    w0.send({ type: 'BOOKMARK', resourceVersion: '30' });
    assert.equal(cache.resourceVersions().ns, '30');
    assert.equal(cache.get('ns', 'a')?.metadata?.annotations?.k, 'v');
    w0.end();
    const w1 = await source.watch(1);
    assert.equal(w1.query.resourceVersion, '30');
    assert.equal(source.listCalls, 1);
    cache.close();
    await new Promise((r) => setImmediate(r));
    assert.equal(w1.aborted, true, 'close ends the open watch');
  });

  test('a newer version holds the annotations of the one it replaces when they did not change', async () => {
    const { source, make } = setup();
    source.lists.push({ items: [pod('a', '10', 'uid-a', { k: 'v' })], resourceVersion: '10' });
    const cache = make();
    await cache.synced;
    const before = cache.get('ns', 'a')!.metadata!.annotations;
    const w0 = await source.watch(0);
    w0.send({ type: 'MODIFIED', pod: pod('a', '12', 'uid-a', { k: 'v' }) });
    assert.equal(cache.get('ns', 'a')!.metadata!.resourceVersion, '12');
    assert.equal(cache.get('ns', 'a')!.metadata!.annotations, before);
    cache.close();
  });

  test('an ERROR 410 event makes it list again and drop pods the new list lacks', async () => {
    const { source, make } = setup();
    source.lists.push({ items: [pod('a', '10'), pod('b', '9')], resourceVersion: '10' });
    source.lists.push({ items: [pod('a', '50', 'uid-a', { after: 'relist' })], resourceVersion: '55' });
    const cache = make();
    await cache.synced;
    const changes: string[] = [];
    cache.onChange((c: PodChange) => changes.push(`${c.type} ${c.pod.metadata?.name} ${c.source}`));
    const w0 = await source.watch(0);
    w0.send({ type: 'ERROR', error: new KubeError(410, 'Expired', 'too old resource version: 10 (40)') });
    const w1 = await source.watch(1);
    assert.equal(w1.query.resourceVersion, '55');
    assert.equal(source.listCalls, 2);
    assert.equal(cache.stats.expired, 1);
    assert.deepEqual(changes, ['deleted b list', 'modified a list']);
    assert.equal(cache.get('ns', 'b'), undefined);
    cache.close();
  });

  test("events older than kwave's own write do not roll the cache back", async () => {
    const { source, make } = setup();
    source.lists.push({ items: [pod('a', '10')], resourceVersion: '10' });
    const cache = make();
    await cache.synced;
    const w0 = await source.watch(0);
    source.written(pod('a', '15', 'uid-a', { mine: 'yes' }));
    assert.equal(cache.get('ns', 'a')?.metadata?.resourceVersion, '15');
    w0.send({ type: 'MODIFIED', pod: pod('a', '12') }); // someone's change before ours, late
    assert.equal(cache.get('ns', 'a')?.metadata?.annotations?.mine, 'yes');
    w0.send({ type: 'MODIFIED', pod: pod('a', '15', 'uid-a', { mine: 'yes' }) }); // our own, via the watch
    w0.send({ type: 'MODIFIED', pod: pod('a', '16', 'uid-a', { later: 'x' }) });
    assert.equal(cache.get('ns', 'a')?.metadata?.annotations?.later, 'x');
    assert.equal(cache.resourceVersions().ns, '16');
    cache.close();
  });

  test('the watch passes over the versions of its own writes it took in, once each, and only those', async () => {
    const { source, make } = setup();
    source.lists.push({ items: [pod('a', '10'), pod('b', '10')], resourceVersion: '10' });
    const cache = make();
    await cache.synced;
    const w0 = await source.watch(0);
    const known = w0.query.known!;
    assert.equal(known('15'), false, 'nothing written yet');
    source.written(pod('a', '15', 'uid-a', { mine: 'yes' }));
    source.written(pod('zzz', '16')); // not a cached pod: not taken in, so its event must be parsed
    w0.send({ type: 'MODIFIED', pod: pod('b', '17') });
    source.written(pod('b', '17')); // the watch was first: the answer changes nothing
    assert.equal(known('16'), false);
    assert.equal(known('17'), false);
    assert.equal(known('15'), true);
    assert.equal(known('15'), false, 'forgotten once its event came');
    assert.equal(
      cache.held('ns', 'a', '15')?.metadata?.annotations?.mine,
      'yes',
      'an answer at the version held is the held pod',
    );
    assert.equal(cache.held('ns', 'a', '14')?.metadata?.resourceVersion, '15', 'or at a later one');
    assert.equal(cache.held('ns', 'a', '16'), undefined);
    cache.close();
  });

  test('observe ignores unknown pods and versions it cannot order', async () => {
    const { source, make } = setup();
    source.lists.push({ items: [pod('a', '10')], resourceVersion: '10' });
    const cache = make();
    await cache.synced;
    assert.equal(cache.observe(pod('zzz', '99')), false);
    assert.equal(cache.observe(pod('a', 'opaque-token')), false);
    assert.equal(cache.observe(pod('a', '11')), true);
    cache.close();
  });

  test('a refused watch backs off, longer each time, and the back-off resets after a good stream', async () => {
    const { source, time, make } = setup();
    source.lists.push({ items: [], resourceVersion: '1' });
    const cache = make();
    await cache.synced;
    (await source.watch(0)).end(new KubeError(503, 'ServiceUnavailable', 'busy'));
    (await source.watch(1)).end(new KubeError(503, 'ServiceUnavailable', 'busy'));
    const w2 = await source.watch(2);
    assert.deepEqual(time.waits, [100, 200]);
    w2.send({ type: 'BOOKMARK', resourceVersion: '2' });
    w2.end();
    await source.watch(3);
    assert.deepEqual(time.waits, [100, 200], 'a productive stream restarts at once');
    cache.close();
  });

  test('waitFor is settled by a watch event and by a deletion', async () => {
    const { source, make } = setup();
    source.lists.push({ items: [pod('a', '10'), pod('b', '10')], resourceVersion: '10' });
    const cache = make();
    await cache.synced;
    const w0 = await source.watch(0);
    const ready = cache.waitFor('ns', 'a', (p) => p.metadata?.annotations?.ready === 'yes', {
      uid: 'uid-a',
      timeoutMs: 120_000,
    });
    const gone = cache.waitFor('ns', 'b', () => false, { uid: 'uid-b', timeoutMs: 120_000 });
    w0.send({ type: 'MODIFIED', pod: pod('a', '11', 'uid-a', { ready: 'no' }) });
    w0.send({ type: 'MODIFIED', pod: pod('a', '12', 'uid-a', { ready: 'yes' }) });
    w0.send({ type: 'DELETED', pod: pod('b', '13') });
    const got = await ready;
    assert.equal(typeof got === 'object' && got.metadata?.resourceVersion, '12');
    assert.equal(await gone, 'vanished');
    cache.close();
  });

  test('a predicate that throws rejects the wait (a bug, not an outcome)', async () => {
    const { source, make } = setup();
    source.lists.push({ items: [pod('a', '10')], resourceVersion: '10' });
    const cache = make();
    await cache.synced;
    await assert.rejects(
      cache.waitFor(
        'ns',
        'a',
        () => {
          throw new Error('boom');
        },
        { timeoutMs: 120_000 },
      ),
      /boom/,
    );
    cache.close();
  });
});
