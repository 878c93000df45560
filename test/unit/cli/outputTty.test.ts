import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReporter } from '../../../src/cli/output/index.js';
import { renderBars } from '../../../src/cli/output/bars.js';
import { advance, etaMs, initialProgress, type ProgressState } from '../../../src/cli/output/progress.js';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import { captureIO, EventScript, rolloutScript, stripAnsi } from './outputEvents.js';

const fold = (events: RolloutEvent[]): ProgressState => events.reduce(advance, initialProgress('web'));

describe('progress state', () => {
  test('counts pods, follows the wave and the pods in flight with their step', () => {
    const s = new EventScript();
    s.add({
      event: 'rollout-start',
      revision: 'r',
      direction: 'upgrade',
      selected: 10,
      alreadyDone: 2,
      waves: 2,
      deferred: 1,
      budget: 3,
      concurrency: 2,
      resumed: false,
    });
    s.add({ event: 'wave-start', wave: 1, waves: 2, pods: 4, target: 6 });
    s.add({ event: 'pod-start', wave: 1, pod: 'web/a' }).add({ event: 'pod-start', wave: 1, pod: 'web/b' });
    s.add({ event: 'pod-step', wave: 1, pod: 'web/b', step: 'wait-complete', message: 'm' });
    s.wait(4000).add({ event: 'pod-end', wave: 1, pod: 'web/a', result: 'upgraded', message: 'ok', durationMs: 4000 });
    s.add({ event: 'pod-end', wave: 1, pod: 'web/c', result: 'failed', reason: 'X', message: 'm', durationMs: 1 });
    const st = fold(s.events);
    assert.equal(st.pods.counts.upgraded, 1);
    assert.equal(st.pods.counts.failed, 1);
    assert.equal(st.wave?.ended, 2);
    assert.deepEqual(
      st.inFlight.map((p) => [p.pod, p.step]),
      [['web/b', 'wait-complete']],
    );
    // 10 selected, 1 deferred: the goal is 9; 2 + 1 at target; 5 left, 2 at a time, 4 s each.
    assert.equal(etaMs(st), 3 * 4000);
  });

  test('a budget wait ends when a pod starts; a rollback after a halt is counted apart', () => {
    const s = new EventScript();
    s.add({
      event: 'rollout-start',
      revision: 'r',
      direction: 'upgrade',
      selected: 3,
      alreadyDone: 0,
      waves: 1,
      deferred: 0,
      budget: 1,
      concurrency: 1,
      resumed: false,
    });
    s.add({ event: 'wave-start', wave: 1, waves: 1, pods: 3, target: 3 });
    s.add({ event: 'budget-wait', wave: 1, unavailable: 1, budget: 1, holders: ['web/x'] });
    assert.equal(fold(s.events).waiting?.kind, 'budget');
    s.add({ event: 'pod-start', wave: 1, pod: 'web/a' });
    assert.equal(fold(s.events).waiting, undefined);
    s.add({ event: 'pod-end', wave: 1, pod: 'web/a', result: 'failed', reason: 'X', message: 'm', durationMs: 1 });
    s.add({ event: 'halt', wave: 1, reason: 'failures', message: 'too many' });
    s.add({ event: 'rollback-start', pods: 1, scope: 'failed' });
    s.add({ event: 'pod-end', wave: 1, pod: 'web/a', result: 'rolled-back', message: 'ok', durationMs: 1 });
    const st = fold(s.events);
    assert.equal(st.pods.counts.failed, 1);
    assert.equal(st.rolledBack, 1);
    assert.equal(st.pods.counts.upgraded, 0);
  });
});

describe('renderBars', () => {
  test('fits an 80-column terminal at every moment of a rollout', () => {
    const script = rolloutScript([1, 5, 24, 30], { failing: 'web/web-7' });
    let st = initialProgress('web');
    for (const e of script.events) {
      st = advance(st, e);
      const lines = renderBars(st, Date.parse(e.time) + 12_000, 80, {
        approveHint: (w) => `kwave approve plans/a-rather-long-plan-file-name.yaml --wave ${w}`,
      });
      for (const l of Object.values(lines)) assert.ok(l.length <= 79, `${l.length}: ${l}`);
    }
  });

  test('shows counts, the wave, a pause countdown and the pods in flight', () => {
    const s = new EventScript();
    s.add({
      event: 'rollout-start',
      revision: 'r',
      direction: 'upgrade',
      selected: 60,
      alreadyDone: 0,
      waves: 4,
      deferred: 0,
      budget: 5,
      concurrency: 5,
      resumed: false,
    });
    s.add({ event: 'wave-start', wave: 1, waves: 4, pods: 1, target: 1 });
    s.add({ event: 'pod-start', wave: 1, pod: 'default/demo-0' }).add({
      event: 'pod-step',
      wave: 1,
      pod: 'default/demo-0',
      step: 'wait-drain',
      message: 'm',
    });
    let lines = renderBars(fold(s.events), s.nowMs + 11_000, 80);
    assert.match(lines.overall, /^overall\s+░+\s+0\/60 pods\s+0%$/);
    assert.match(lines.wave, /^wave 1\/4\s+░+\s+0\/1\s+0%\s+11s$/);
    assert.equal(lines.status, 'in flight (1): demo-0 draining 11s');
    s.wait(2000).add({
      event: 'pod-end',
      wave: 1,
      pod: 'default/demo-0',
      result: 'upgraded',
      message: 'ok',
      durationMs: 2000,
    });
    s.add({
      event: 'wave-end',
      wave: 1,
      summary: { wave: 1, pods: 1, upgraded: 1, failed: 0, vanished: 0, durationMs: 2000 },
    });
    s.add({ event: 'gate-pause', wave: 1, gate: 'soak', msLeft: 3000 });
    lines = renderBars(fold(s.events), s.nowMs + 1000, 80);
    assert.match(lines.overall, /1\/60 pods\s+1%\s+ETA 24s$/);
    assert.match(lines.wave, /1\/1\s+100%\s+done in 2\.0s$/);
    assert.equal(lines.status, 'pause soak after wave 1: 2.0s left');
  });
});

describe('TTY reporter', () => {
  test('draws bars, prints notable events above them, and ends with the summary; nothing lost', async () => {
    const script = rolloutScript([1, 3, 4], { failing: 'web/web-2' });
    const cap = captureIO(true, 80);
    const r = createReporter({ io: cap.io, format: 'text', tty: true, plan: 'web', fps: 50 });
    for (const e of script.events.slice(0, -1)) r.sink(e);
    await new Promise((res) => setTimeout(res, 60)); // let a frame or two draw
    r.sink(script.events.at(-1)!);
    r.close();
    const raw = cap.text();
    assert.ok(raw.includes('\x1B[?25l'), 'hides the cursor while drawing');
    assert.ok(raw.includes('\x1B[?25h'), 'shows it again');
    const text = stripAnsi(raw);
    assert.match(text, /overall\s+█+/);
    assert.match(text, /rollout started: 8 pods, 3 waves/);
    assert.match(text, /pod web\/web-2 FAILED after 2\.1s: ErrImagePull: pull failed/);
    for (const w of [1, 2, 3]) assert.match(text, new RegExp(`wave ${w}/3 done in`));
    assert.doesNotMatch(text, /pod web\/web-0 upgraded/, 'successful pods show in the bars, not as lines');
    const tail = text.trimEnd().split('\n').slice(-6);
    assert.match(tail[0]!, /^wave\s+pods/);
    assert.match(tail.at(-1)!, /web Completed in \d+s: 8 pods upgraded$/);
  });

  test('close() without a rollout-end stops drawing and flushes pending lines', () => {
    const s = new EventScript();
    s.add({
      event: 'rollout-start',
      revision: 'r',
      direction: 'upgrade',
      selected: 2,
      alreadyDone: 0,
      waves: 1,
      deferred: 0,
      budget: 1,
      concurrency: 1,
      resumed: false,
    });
    s.add({ event: 'interrupt', message: 'SIGINT: finishing 1 pod in flight' });
    const cap = captureIO(true, 80);
    const r = createReporter({ io: cap.io, format: 'text', tty: true, plan: 'web' });
    s.events.forEach(r.sink);
    r.close();
    r.close();
    assert.match(stripAnsi(cap.text()), /interrupted: SIGINT: finishing 1 pod in flight/);
  });
});

test('an output bug is reported once on stderr and never reaches the runner', () => {
  const cap = captureIO();
  let calls = 0;
  cap.stdout.write = () => {
    calls++;
    throw new Error('EPIPE');
  };
  const r = createReporter({ io: cap.io, format: 'json', tty: false, plan: 'web' });
  const s = rolloutScript([1]);
  assert.doesNotThrow(() => s.events.forEach(r.sink));
  assert.doesNotThrow(() => r.close());
  // The lines of one turn of the event loop go out in one write.
  assert.equal(calls, 1);
  assert.equal((cap.errText().match(/cannot show progress/g) ?? []).length, 1);
});
