// Which runner events become notifications, and their JSON and Slack bodies.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RolloutEvent, RolloutEventBody } from '../../../src/rollout/events.js';
import { advance, notificationOf, runStart, type RunSoFar } from '../../../src/notify/notification.js';
import { escapeMrkdwn, jsonBody, notificationBody, slackBody } from '../../../src/notify/body.js';

const at = (body: RolloutEventBody): RolloutEvent =>
  ({ time: '2026-12-01T12:00:00.000Z', plan: 'web', ...body }) as RolloutEvent;

const START = at({
  event: 'rollout-start',
  revision: 'abc1234567',
  direction: 'upgrade',
  selected: 10,
  alreadyDone: 2,
  waves: 3,
  deferred: 0,
  budget: 2,
  concurrency: 2,
  resumed: false,
});
const WAVE_END = at({ event: 'wave-end', wave: 1, summary: { wave: 1, pods: 1, upgraded: 1, failed: 0, vanished: 0 } });
const GATE_PASSED = at({
  event: 'gate-end',
  wave: 1,
  gate: 'error-rate',
  result: 'passed',
  message: 'error-rate: result 0 matched successCondition',
});
const GATE_FAILED = at({
  event: 'gate-end',
  wave: 2,
  gate: 'error-rate',
  result: 'failed',
  message: 'error-rate: result 0.5 matched failureCondition result >= 0.05 at measurement 1 of 1',
});
const HALT = at({
  event: 'halt',
  wave: 2,
  reason: 'failures',
  message: '1 pod failed, more than maxFailed 0: default/demo-3 (ErrImagePull)',
});
const ROLLBACK = at({ event: 'rollback-start', pods: 1, scope: 'failed' });
const end = (
  phase: 'Completed' | 'Halted' | 'RolledBack' | 'Paused' | 'Partial',
  exitCode: number,
  message = `${phase}`,
): RolloutEvent => at({ event: 'rollout-end', phase, exitCode, message, waves: [], durationMs: 1000 });

/** The kinds a sequence of events makes, in order. */
function kinds(events: RolloutEvent[]): string[] {
  let run: RunSoFar = runStart();
  const out: string[] = [];
  for (const e of events) {
    const n = notificationOf(e, run, 'abc1234567');
    run = advance(run, e);
    if (n) out.push(n.kind);
  }
  return out;
}

describe('notificationOf', () => {
  test('a clean run: started, each wave and gate, completed; pod events make none', () => {
    const pod = at({
      event: 'pod-end',
      wave: 1,
      pod: 'default/demo-0',
      result: 'upgraded',
      message: '',
      durationMs: 5,
    });
    assert.deepEqual(
      kinds([
        START,
        at({ event: 'wave-start', wave: 1, waves: 3, pods: 1, target: 1 }),
        pod,
        WAVE_END,
        GATE_PASSED,
        end('Completed', 0),
      ]),
      ['started', 'wave-completed', 'gate', 'completed'],
    );
  });

  test('a halt with a rollback: halted at once, then rolled-back for the end (not completed)', () => {
    assert.deepEqual(kinds([START, WAVE_END, GATE_FAILED, HALT, ROLLBACK, end('Halted', 3)]), [
      'started',
      'wave-completed',
      'gate',
      'halted',
      'rolled-back',
    ]);
  });

  test('a halt without a rollback and an interrupted run send no end notification', () => {
    assert.deepEqual(kinds([START, HALT, end('Halted', 3)]), ['started', 'halted']);
    assert.deepEqual(kinds([START, end('Paused', 4)]), ['started']);
  });

  test('a partial run (pods left for a node) is completed, marked as a warning', () => {
    const n = notificationOf(end('Partial', 5, 'partial: 2 upgraded; 1 pod left'), runStart(), 'r');
    assert.equal(n?.kind, 'completed');
    assert.equal(n?.severity, 'warning');
  });

  test('kwave rollback: started, then rolled-back; a new run forgets the last one rolled back', () => {
    const rb = at({
      event: 'rollout-start',
      revision: 'r',
      direction: 'rollback',
      selected: 3,
      alreadyDone: 0,
      waves: 1,
      deferred: 0,
      budget: 1,
      concurrency: 1,
      resumed: false,
    });
    assert.deepEqual(kinds([rb, end('RolledBack', 0), START, end('Completed', 0)]), [
      'started',
      'rolled-back',
      'started',
      'completed',
    ]);
  });

  test('an interrupted gate says nothing; a failed one is an error', () => {
    assert.equal(
      notificationOf(
        at({ event: 'gate-end', wave: 1, gate: 'g', result: 'interrupted', message: '' }),
        runStart(),
        'r',
      ),
      undefined,
    );
    assert.equal(notificationOf(GATE_FAILED, runStart(), 'r')?.severity, 'error');
  });
});

describe('bodies', () => {
  const halted = notificationOf(HALT, runStart(), 'abc1234567')!;

  test('json: kwave.dev/notification with the event, plan, revision, summary and the runner event', () => {
    assert.deepEqual(jsonBody(halted), {
      kind: 'kwave.dev/notification',
      version: 1,
      event: 'halted',
      plan: 'web',
      revision: 'abc1234567',
      time: '2026-12-01T12:00:00.000Z',
      severity: 'error',
      summary:
        'plan web halted in wave 2 (failures): 1 pod failed, more than maxFailed 0: default/demo-3 (ErrImagePull)',
      detail: HALT,
    });
    assert.deepEqual(JSON.parse(notificationBody(halted, 'json')), jsonBody(halted));
  });

  test('slack: text for clients without blocks, a mrkdwn section and a context line', () => {
    const body = slackBody(halted);
    assert.equal(body.text, `kwave web: halted: ${halted.summary}`);
    assert.equal(body.blocks[0]!.type, 'section');
    assert.match(JSON.stringify(body.blocks[0]), /:red_circle: \*kwave web: halted\*\\nplan web halted in wave 2/);
    assert.deepEqual(body.blocks[1], {
      type: 'context',
      elements: [{ type: 'mrkdwn', text: 'plan web · revision abc1234567 · 2026-12-01T12:00:00.000Z' }],
    });
  });

  test('slack: &, < and > are escaped (no accidental links or @channel mentions); long text is cut to the block limit', () => {
    assert.equal(escapeMrkdwn('a < b && c > <!channel>'), 'a &lt; b &amp;&amp; c &gt; &lt;!channel&gt;');
    const long = notificationOf(
      at({ event: 'halt', wave: 1, reason: 'gate', message: 'x'.repeat(5000) }),
      runStart(),
      'r',
    )!;
    const section = slackBody(long).blocks[0] as { text: { text: string } };
    assert.equal(section.text.text.length, 3000);
    assert.ok(section.text.text.endsWith('…'));
  });
});
