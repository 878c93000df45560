// The background notifier against loopback receivers: one that records, one that answers 500, one
// that never answers. Back-off sleeps are recorded, not slept; request timeouts are real but short.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RolloutEvent, RolloutEventBody } from '../../../src/rollout/events.js';
import type { NotifyTarget } from '../../../src/plan/types.js';
import type { Sleep } from '../../../src/sleep.js';
import { Notifier, receiverName, type NotifyReport } from '../../../src/notify/notifier.js';
import { startReceiver, type Receiver } from '../../e2e/helpers/receiver.js';

const TOKEN = 'SENTINEL-notify-5c1e0b7a93d2f846';
const at = (body: RolloutEventBody): RolloutEvent =>
  ({ time: '2026-12-01T12:00:00.000Z', plan: 'web', ...body }) as RolloutEvent;
const START = at({
  event: 'rollout-start',
  revision: 'r1',
  direction: 'upgrade',
  selected: 4,
  alreadyDone: 0,
  waves: 2,
  deferred: 0,
  budget: 1,
  concurrency: 1,
  resumed: false,
});
const waveEnd = (wave: number) =>
  at({ event: 'wave-end', wave, summary: { wave, pods: 2, upgraded: 2, failed: 0, vanished: 0 } });
const HALT = at({ event: 'halt', wave: 2, reason: 'gate', message: 'error-rate failed' });
// A generous timeout: on a loaded machine a slow answer must not turn into a retry (a second post).
const target = (url: string | undefined, more: Partial<NotifyTarget> = {}): NotifyTarget => ({
  url,
  on: ['started', 'wave-completed', 'gate', 'halted', 'completed', 'rolled-back'],
  format: 'json',
  timeoutMs: 30_000,
  ...more,
});

describe('Notifier', () => {
  let ok: Receiver;
  let failing: Receiver;
  let hanging: Receiver;
  const sleeps: number[] = [];
  const sleep: Sleep = async (ms, signal) => {
    sleeps.push(ms);
    return !signal?.aborted;
  };

  before(async () => {
    ok = await startReceiver('ok');
    failing = await startReceiver('fail');
    hanging = await startReceiver('hang');
  });
  after(async () => {
    await Promise.all([ok.close(), failing.close(), hanging.close()]);
  });

  test('posts each chosen event in order, with the bearer token; the sink returns before anything is sent', async () => {
    ok.received.length = 0;
    const reports: NotifyReport[] = [];
    const n = new Notifier([target(`${ok.url}/hook`, { auth: { bearerTokenEnv: 'HOOK_TOKEN' } })], {
      revision: 'r1',
      env: { HOOK_TOKEN: TOKEN },
      sleep,
      onResult: (r) => reports.push(r),
    });
    n.sink(START);
    n.sink(waveEnd(1));
    n.sink(at({ event: 'pod-start', wave: 2, pod: 'default/demo-2' }));
    n.sink(HALT);
    // Queued, not sent: the rollout's event loop turn is not held up by the network.
    assert.equal(ok.received.length, 0);
    assert.equal(n.pending, 3);
    assert.equal(await n.flush(60_000), 0);
    assert.deepEqual(
      ok.bodies().map((b) => (b as { event: string }).event),
      ['started', 'wave-completed', 'halted'],
    );
    assert.ok(
      ok.received.every(
        (r) => r.authorization === `Bearer ${TOKEN}` && r.contentType === 'application/json' && r.path === '/hook',
      ),
    );
    assert.deepEqual(n.results, { sent: 3, failed: 0, dropped: 0 });
    assert.deepEqual(
      reports.map((r) => r.result),
      ['sent', 'sent', 'sent'],
    );
  });

  test('a receiver answering 500 is retried with a doubling back-off, then counted failed; others are unaffected', async () => {
    ok.received.length = 0;
    failing.received.length = 0;
    sleeps.length = 0;
    const reports: NotifyReport[] = [];
    const n = new Notifier(
      [target(failing.url, { auth: { bearerTokenEnv: 'HOOK_TOKEN' } }), target(ok.url, { on: ['halted'] })],
      {
        revision: 'r1',
        env: { HOOK_TOKEN: TOKEN },
        sleep,
        backoffMs: 100,
        onResult: (r) => reports.push(r),
      },
    );
    n.sink(START);
    n.sink(HALT);
    await n.flush(60_000);
    assert.equal(failing.received.length, 6, 'two notifications, three attempts each');
    assert.deepEqual(sleeps, [100, 200, 100, 200]);
    assert.equal(ok.received.length, 1, 'the healthy receiver got its halt');
    assert.deepEqual(n.results, { sent: 1, failed: 2, dropped: 0 });
    const failed = reports.filter((r) => r.result === 'failed');
    assert.deepEqual(
      failed.map((r) => [r.target, r.kind, r.attempts]),
      [
        [receiverName(failing.url, 0), 'started', 3],
        [receiverName(failing.url, 0), 'halted', 3],
      ],
    );
    assert.match(failed[0]!.error!, /answered 500 Internal Server Error \(after 3 attempts\)/);
    // The 500 body echoes the request headers: none of it is reported.
    assert.ok(!JSON.stringify(reports).includes(TOKEN));
  });

  test('a receiver that never answers times out per attempt and is counted failed', async () => {
    hanging.received.length = 0;
    const reports: NotifyReport[] = [];
    const n = new Notifier([target(hanging.url, { timeoutMs: 200 })], {
      revision: 'r1',
      sleep,
      backoffMs: 1,
      attempts: 2,
      onResult: (r) => reports.push(r),
    });
    n.sink(HALT);
    await n.flush(120_000);
    assert.equal(hanging.received.length, 2);
    assert.deepEqual(n.results, { sent: 0, failed: 1, dropped: 0 });
    assert.match(reports[0]!.error!, /no answer within 200 ms \(after 2 attempts\)/);
  });

  test('flush is bounded: what a hanging receiver still holds is dropped, not waited for', async () => {
    const n = new Notifier([target(hanging.url, { timeoutMs: 600_000 })], { revision: 'r1', sleep });
    n.sink(START);
    n.sink(waveEnd(1));
    n.sink(HALT);
    // The first is in flight (unanswered) and two wait: all three are given up at the deadline.
    await hanging.waitFor(hanging.received.length + 1);
    assert.equal(await n.flush(50), 3);
    assert.deepEqual(n.results, { sent: 0, failed: 0, dropped: 3 });
    assert.equal(n.pending, 0);
    n.sink(START);
    assert.equal(n.pending, 0, 'nothing is queued after the flush');
  });

  test('the queue is bounded: the oldest notification is dropped, the latest kept', async () => {
    ok.received.length = 0;
    const dropped: string[] = [];
    // A receiver that holds the first request until the queue has overflowed.
    const n = new Notifier([target(hanging.url, { timeoutMs: 600_000 }), target(ok.url)], {
      revision: 'r1',
      sleep,
      maxQueue: 2,
      onResult: (r) => r.result === 'dropped' && dropped.push(`${r.target} ${r.kind}`),
    });
    // Each event once the healthy receiver has the one before, so only receiver 0 falls behind.
    n.sink(START);
    await ok.waitFor(1);
    for (let w = 1; w <= 3; w++) {
      n.sink(waveEnd(w));
      await ok.waitFor(1 + w);
    }
    n.sink(HALT);
    await ok.waitFor(5);
    // Receiver 0: START in flight; of the four queued after it, two are dropped (the oldest).
    assert.deepEqual(dropped, [
      `${receiverName(hanging.url, 0)} wave-completed`,
      `${receiverName(hanging.url, 0)} wave-completed`,
    ]);
    await n.flush(50);
    assert.deepEqual(
      ok.bodies().map((b) => (b as { event: string }).event),
      ['started', 'wave-completed', 'wave-completed', 'wave-completed', 'halted'],
      'the receiver that keeps up got everything',
    );
  });

  test('a missing token fails at once, naming the variable, without a request', async () => {
    ok.received.length = 0;
    const reports: NotifyReport[] = [];
    const n = new Notifier([target(ok.url, { auth: { bearerTokenEnv: 'NOT_SET' } })], {
      revision: 'r1',
      env: {},
      sleep,
      onResult: (r) => reports.push(r),
    });
    n.sink(HALT);
    await n.flush(60_000);
    assert.equal(ok.received.length, 0);
    assert.equal(reports[0]!.result, 'failed');
    assert.match(reports[0]!.error!, /environment variable NOT_SET is not set/);
  });

  test('receiverName shows scheme and host only (a chat webhook path is its secret), or where the URL is read from', () => {
    assert.equal(
      receiverName('https://hooks.slack.com/services/T000/B000/XXXXSECRET?x=1', 2),
      'notify[2] (https://hooks.slack.com/…)',
    );
    assert.equal(receiverName({ urlEnv: 'SLACK_URL' }, 0), 'notify[0] (the URL in $SLACK_URL)');
    assert.equal(receiverName({ urlFile: '/run/hook' }, 1), 'notify[1] (the URL in /run/hook)');
  });

  test('a receiver URL read from the environment is used, and a missing one fails unretried without a value shown', async () => {
    const seen: string[] = [];
    const fetchSpy: typeof fetch = async (input) => {
      seen.push(String(input));
      return new Response('no', { status: 404 });
    };
    const reports: NotifyReport[] = [];
    const n = new Notifier([target(undefined, { urlEnv: 'HOOK_URL' }), target(undefined, { urlEnv: 'UNSET_URL' })], {
      revision: 'r1',
      fetch: fetchSpy,
      env: { HOOK_URL: 'https://hooks.example/services/T/B/SECRETPART\n' },
      onResult: (r) => reports.push(r),
    });
    n.sink(START);
    await n.flush(5_000);
    assert.deepEqual(seen, ['https://hooks.example/services/T/B/SECRETPART']);
    assert.deepEqual(reports.map((r) => [r.target, r.result, r.attempts, r.error]).sort(), [
      ['notify[0] (the URL in $HOOK_URL)', 'failed', 1, 'answered 404'],
      ['notify[1] (the URL in $UNSET_URL)', 'failed', 1, 'url: environment variable UNSET_URL is not set or empty'],
    ]);
  });
});
