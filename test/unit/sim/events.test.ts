// The kubelet's event recorder keeps at most maxEvents Events: the least recently recorded go
// first, and an Event that repeats counts as recent again.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventRecorder } from '../../../src/sim/events.js';
import { Store, type KubeObject } from '../../../src/sim/store.js';

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u1' } };
const source = { component: 'kubelet', host: 'n1' };

function recorded(store: Store): { reason: string; count: number }[] {
  return store
    .list('events')
    .map((e) => ({ reason: e.reason as string, count: e.count as number, first: e.metadata.name }))
    .sort((a, b) => (a.first < b.first ? -1 : 1))
    .map(({ reason, count }) => ({ reason, count }));
}

describe('event recorder', () => {
  test('keeps the last maxEvents; a repeated Event is kept over older ones', () => {
    const store = new Store();
    const events = new EventRecorder(store, () => new Date('2026-01-01T00:00:00Z'), 3);
    const record = (reason: string) => events.record({ object: pod, type: 'Normal', reason, message: reason, source });
    for (const r of ['a', 'b', 'c']) record(r);
    record('a'); // a repeats: now the most recent
    record('d'); // b goes
    assert.deepEqual(recorded(store), [
      { reason: 'a', count: 2 },
      { reason: 'c', count: 1 },
      { reason: 'd', count: 1 },
    ]);
    for (let i = 0; i < 5000; i++) record('a'); // many repeats, no new Event: nothing dropped
    record('e'); // c goes
    assert.deepEqual(recorded(store), [
      { reason: 'a', count: 5002 },
      { reason: 'd', count: 1 },
      { reason: 'e', count: 1 },
    ]);
    for (const r of ['f', 'g', 'h']) record(r);
    assert.deepEqual(
      recorded(store).map((e) => e.reason),
      ['f', 'g', 'h'],
    );
  });
});
