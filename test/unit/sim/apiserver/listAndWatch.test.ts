import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeContinue, listPage, lowerBound } from '../../../../src/sim/apiserver/list.js';
import { ListCache } from '../../../../src/sim/apiserver/listCache.js';
import { buildPredicate } from '../../../../src/sim/apiserver/predicate.js';
import { RESOURCES } from '../../../../src/sim/apiserver/resources.js';
import { refusal } from './refusal.js';
import { eventFor } from '../../../../src/sim/apiserver/watch.js';
import { Store, type Change } from '../../../../src/sim/store.js';

const pods = RESOURCES.pods;
const pod = (namespace: string, name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels },
  spec: {},
});

function fill(store: Store): void {
  for (const ns of ['b', 'a'])
    for (let i = 9; i >= 0; i--) store.create('pods', pod(ns, `p${i}`, { app: i % 2 ? 'odd' : 'even' }));
}
const q = (s: string) => new URLSearchParams(s);
const page = (store: Store, cache: ListCache, ns: string | undefined, query: string) =>
  listPage(store, cache, pods, buildPredicate(pods, ns, q(query)), q(query));

describe('list', () => {
  test('items come sorted by namespace then name, with the store version', () => {
    const store = new Store();
    fill(store);
    const cache = new ListCache(store);
    const all = page(store, cache, undefined, '');
    assert.equal(all.items.length, 20);
    assert.equal(all.items[0]!.metadata.namespace, 'a');
    assert.equal(all.items[0]!.metadata.name, 'p0');
    assert.equal(all.rv, store.resourceVersion);
    assert.equal(page(store, cache, 'b', '').items.length, 10);
    cache.close();
  });

  test('limit/continue pages through a consistent snapshot, even while objects change', () => {
    const store = new Store();
    fill(store);
    const cache = new ListCache(store);
    const first = page(store, cache, 'a', 'limit=4&labelSelector=app%3Deven');
    assert.deepEqual(
      first.items.map((p) => p.metadata.name),
      ['p0', 'p2', 'p4', 'p6'],
    );
    assert.ok(first.continue);
    assert.equal(first.remainingItemCount, undefined, 'no count with a selector');
    store.remove('pods', 'a', 'p8');
    store.create('pods', pod('a', 'p99', { app: 'even' }));
    const second = page(store, cache, 'a', `limit=4&labelSelector=app%3Deven&continue=${first.continue}`);
    assert.deepEqual(
      second.items.map((p) => p.metadata.name),
      ['p8'],
    );
    assert.equal(second.rv, first.rv);
    assert.equal(second.continue, undefined);
    cache.close();
  });

  test('without selectors a page reports remainingItemCount', () => {
    const store = new Store();
    fill(store);
    const cache = new ListCache(store);
    const first = page(store, cache, undefined, 'limit=5');
    assert.equal(first.remainingItemCount, 15);
    assert.equal(decodeContinue(first.continue!).rv, first.rv);
    cache.close();
  });

  test('a continue token whose version left the window is 410 Expired', () => {
    const store = new Store({ historySize: 5 });
    fill(store);
    const cache = new ListCache(store);
    const first = page(store, cache, undefined, 'limit=5');
    for (let i = 0; i < 10; i++) store.create('pods', pod('c', `x${i}`));
    const s = refusal(() => page(store, cache, undefined, `limit=5&continue=${first.continue}`));
    assert.equal(s.code, 410);
    assert.equal(s.reason, 'Expired');
    cache.close();
  });

  test('resourceVersion=0 is served whole (limit ignored), a future version is 504, continue+resourceVersion is 400', () => {
    const store = new Store();
    fill(store);
    const cache = new ListCache(store);
    assert.equal(page(store, cache, undefined, 'resourceVersion=0&limit=3').items.length, 20);
    assert.equal(refusal(() => page(store, cache, undefined, 'resourceVersion=99999')).code, 504);
    const first = page(store, cache, undefined, 'limit=3');
    assert.equal(
      refusal(() => page(store, cache, undefined, `resourceVersion=1&continue=${first.continue}`)).code,
      400,
    );
    assert.equal(refusal(() => page(store, cache, undefined, 'continue=garbage')).code, 400);
    cache.close();
  });

  test('lowerBound finds the first key not below the target', () => {
    assert.equal(lowerBound(['a/1', 'a/2', 'b/1'], 'a/'), 0);
    assert.equal(lowerBound(['a/1', 'a/2', 'b/1'], 'a0'), 2);
    assert.equal(lowerBound(['a/1', 'a/2', 'b/1'], 'z'), 3);
  });
});

describe('watch events through a selector', () => {
  const store = new Store();
  const changes: Change[] = [];
  store.subscribe((c) => changes.push(c));
  const a = store.create('pods', pod('ns', 'a', { app: 'web' }));
  store.update('pods', { ...a, metadata: { ...a.metadata, labels: { app: 'web', v: '2' } } });
  const b = store.get('pods', 'ns', 'a')!;
  store.update('pods', { ...b, metadata: { ...b.metadata, labels: { app: 'db' } } });
  const c = store.get('pods', 'ns', 'a')!;
  store.update('pods', { ...c, metadata: { ...c.metadata, labels: { app: 'web' } } });
  store.remove('pods', 'ns', 'a');
  const predicate = buildPredicate(pods, 'ns', q('labelSelector=app%3Dweb'));
  const events = changes.map((ch) => eventFor(ch, predicate));

  test('ADDED, MODIFIED, DELETED when it stops matching, ADDED when it matches again, DELETED', () => {
    assert.deepEqual(
      events.map((e) => e?.type),
      ['ADDED', 'MODIFIED', 'DELETED', 'ADDED', 'DELETED'],
    );
  });

  test('the DELETED of an object that stopped matching carries its previous content and the new version', () => {
    const e = events[2]!;
    assert.deepEqual(e.object.metadata.labels, { app: 'web', v: '2' });
    assert.equal(e.object.metadata.resourceVersion, String(changes[2]!.rv));
  });

  test('a watcher of another namespace sees nothing', () => {
    const other = buildPredicate(pods, 'other', q(''));
    assert.deepEqual(changes.map((ch) => eventFor(ch, other)).filter(Boolean), []);
  });
});
