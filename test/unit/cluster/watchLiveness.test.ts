// The watch liveness deadline on a fake clock: a stream that stops delivering without closing is
// ended after the deadline and watched again from the last version; a stream that keeps talking,
// or that the server ends by its timeout, is never cut.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { ResumableListWatch, type ObjectWatchEvent, type ResumeQuery } from '../../../src/cluster/listWatch.js';
import { defaultWatchTimeoutSeconds, livenessDeadline, silenceLimitMs } from '../../../src/cluster/watchLiveness.js';

/** Time that moves only when told; sleeps end when it reaches them. */
function fakeClock() {
  let now = 0;
  const sleepers = new Set<{ at: number; resolve: (v: boolean) => void }>();
  const flush = () => new Promise<void>((r) => setImmediate(r));
  return {
    now: () => now,
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<boolean>((resolve) => {
        if (signal?.aborted) return resolve(false);
        const s = { at: now + ms, resolve };
        sleepers.add(s);
        signal?.addEventListener('abort', () => (sleepers.delete(s), resolve(false)), { once: true });
      }),
    async advance(ms: number) {
      const end = now + ms;
      for (;;) {
        await flush();
        const due = [...sleepers].filter((s) => s.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        now = due.at;
        sleepers.delete(due);
        due.resolve(true);
      }
      now = end;
      await flush();
    },
  };
}

interface Obj {
  metadata: { name: string; resourceVersion: string };
}

describe('watch liveness', () => {
  test('the default timeout stays below the deadline, so a healthy server ends a silent stream first', () => {
    assert.equal(
      defaultWatchTimeoutSeconds(45, () => 0),
      25,
    );
    assert.equal(
      defaultWatchTimeoutSeconds(45, () => 0.9999),
      33,
    );
    assert.equal(silenceLimitMs(45, 33), 45_000);
    assert.equal(silenceLimitMs(45, 300), 400_000, "a caller's long timeout stretches it");
    assert.equal(
      defaultWatchTimeoutSeconds(1, () => 0.5),
      1,
    );
  });

  test('fires once after the limit without a touch; a touch defers it; an abort stops it', async () => {
    const clock = fakeClock();
    const fired: number[] = [];
    const stop = new AbortController();
    const d = livenessDeadline(10_000, clock, stop.signal, (ms) => fired.push(ms));
    await clock.advance(6_000);
    d.touch();
    await clock.advance(9_000);
    assert.equal(fired.length, 0, 'touched 9 s ago');
    await clock.advance(1_000);
    assert.deepEqual(fired, [10_000]);
    await clock.advance(60_000);
    assert.deepEqual(fired, [10_000], 'once');
    const other = livenessDeadline(10_000, clock, stop.signal, (ms) => fired.push(ms));
    stop.abort();
    await clock.advance(20_000);
    other.touch();
    assert.deepEqual(fired, [10_000]);
  });

  test('a stalled stream is ended and watched again from the last version; a talking one is not', async () => {
    const clock = fakeClock();
    const watches: { query: ResumeQuery; aborted: boolean; send: (e: ObjectWatchEvent<Obj>) => void }[] = [];
    const errors: KubeError[] = [];
    const changes: string[] = [];
    const stop = new AbortController();
    const lw = new ResumableListWatch<Obj>(
      {
        what: 'things',
        list: async () => ({ items: [], resourceVersion: '10' }),
        watch: async (query, onEvent) => {
          const w = { query, aborted: false, send: onEvent };
          watches.push(w);
          return { abort: () => (w.aborted = true) };
        },
        onList: () => undefined,
        onChange: (type, o) => changes.push(`${type} ${o.metadata.name}`),
        onError: (err) => errors.push(err),
      },
      {
        deps: { sleep: clock.sleep, now: clock.now, random: () => 0 },
        signal: stop.signal,
        stats: { lists: 0, watches: 0, expired: 0 },
        watchLivenessSeconds: 45,
      },
    );
    await lw.synced;
    await clock.advance(0);
    assert.equal(watches.length, 1);
    assert.equal(watches[0]!.query.timeoutSeconds, 25);
    // Talking: an event every 30 s keeps it alive well past the deadline.
    for (let i = 0; i < 4; i++) {
      await clock.advance(30_000);
      watches[0]!.send({ type: 'BOOKMARK', resourceVersion: String(20 + i) });
    }
    watches[0]!.send({
      type: 'MODIFIED',
      object: { metadata: { name: 'a', resourceVersion: '30' } },
    });
    assert.equal(watches.length, 1);
    assert.equal(errors.length, 0);
    // Then silence: cut at the deadline, watched again from the last version seen.
    await clock.advance(44_000);
    assert.equal(watches.length, 1);
    await clock.advance(1_000);
    assert.equal(watches[0]!.aborted, true);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.message, /^watch of things silent for 45s \(no event, no bookmark\): watched again$/);
    await clock.advance(0);
    assert.equal(watches.length, 2);
    assert.equal(watches[1]!.query.resourceVersion, '30', 'resumed, not listed again');
    watches[1]!.send({ type: 'ADDED', object: { metadata: { name: 'b', resourceVersion: '31' } } });
    assert.deepEqual(changes, ['MODIFIED a', 'ADDED b']);
    stop.abort();
  });
});
