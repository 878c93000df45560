// Remote control: how pause / resume / abort requests change the control state, what a runner
// makes of it, its encoding, and how the runner's paused / resumed events fold into the record.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CONTROL_HISTORY_LIMIT,
  CONTROL_KEY,
  controlFor,
  decodeControl,
  emptyControl,
  encodeControl,
  requestControl,
  type ControlAction,
  type ControlRequest,
  type ControlState,
} from '../../../src/record/control.js';
import { newRecord } from '../../../src/record/record.js';
import { applyEvent } from '../../../src/record/reducer.js';
import { decodeRecord, encodeRecordData, recordConfigMap } from '../../../src/record/codec.js';
import type { RolloutEvent, RolloutEventBody } from '../../../src/rollout/events.js';

const RUNNER = 'ci@runner-7 pid 12 #a1b2c3';
const req = (action: ControlAction, n = 0, revision = 'rev1'): ControlRequest => ({
  action,
  by: 'kwave-admin (alice@laptop)',
  at: `2026-12-01T12:00:0${n}.000Z`,
  revision,
});

/** Applies a request that must change the state; fails the test otherwise. */
function apply(state: ControlState, r: ControlRequest, runner: string | undefined = RUNNER): ControlState {
  const d = requestControl(state, r, runner ? { runner } : {});
  assert.ok(d.ok && d.changed, JSON.stringify(d));
  return d.state;
}

describe('requestControl', () => {
  test('abort says what the runner will do: an upgrade applies the rollback policy; a rollback stops reverting and exits 3', () => {
    const up = requestControl(emptyControl(), req('abort', 1), { runner: RUNNER, direction: 'upgrade' });
    assert.ok(up.ok && up.changed);
    assert.equal(up.message, `aborted: the runner (${RUNNER}) halts and applies the plan's rollback policy`);
    const back = requestControl(emptyControl(), req('abort', 1), { runner: RUNNER, direction: 'rollback' });
    assert.ok(back.ok && back.changed);
    assert.equal(
      back.message,
      `aborted: the runner (${RUNNER}) stops rolling back: no more pods are reverted, pods in flight finish, it exits 3; run kwave rollback again to finish`,
    );
    assert.deepEqual(back.state, up.state, 'the request itself is the same');
  });
  test('pause, then resume: the state follows, each request is in the history with who and when', () => {
    const paused = apply(emptyControl(), req('pause', 1));
    assert.deepEqual(paused.paused, req('pause', 1));
    const resumed = apply(paused, req('resume', 2));
    assert.equal(resumed.paused, undefined);
    assert.deepEqual(resumed.history, [req('pause', 1), req('resume', 2)]);
  });

  test('pause and resume are idempotent: a second pause keeps the first (and says whose); resume when not paused changes nothing', () => {
    const paused = apply(emptyControl(), req('pause', 1));
    const again = requestControl(paused, { ...req('pause', 2), by: 'bob@desk' }, { runner: RUNNER });
    assert.deepEqual(again, {
      ok: true,
      changed: false,
      message: 'already paused by kwave-admin (alice@laptop) at 2026-12-01T12:00:01.000Z',
    });
    assert.deepEqual(requestControl(emptyControl(), req('resume'), {}), {
      ok: true,
      changed: false,
      message: 'not paused: nothing to resume',
    });
  });

  test('a pause of another revision is replaced by a pause of this one', () => {
    const old = apply(emptyControl(), req('pause', 1, 'old'));
    const now = apply(old, req('pause', 2, 'rev1'));
    assert.equal(now.paused?.revision, 'rev1');
  });

  test('pausing with no runner is allowed (a run of that revision will wait), and says so', () => {
    const d = requestControl(emptyControl(), req('pause'), {});
    assert.ok(d.ok && d.changed);
    assert.match(d.message, /no runner holds the lease now; a run of this revision will wait until resumed/);
  });

  test('abort needs a runner, is addressed to it, ends a pause, and is not repeated for the same runner', () => {
    assert.deepEqual(requestControl(emptyControl(), req('abort'), {}).ok, false);
    const paused = apply(emptyControl(), req('pause', 1));
    const aborted = apply(paused, req('abort', 2));
    assert.deepEqual(aborted.abort, { ...req('abort', 2), holder: RUNNER });
    assert.equal(aborted.paused, undefined, 'a halted run has nothing left to pause');
    const again = requestControl(aborted, req('abort', 3), { runner: RUNNER });
    assert.ok(again.ok && !again.changed);
    // The next runner is another identity: an abort of the last run does not reach it, a new one does.
    const next = apply(aborted, req('abort', 4), 'ci@runner-8 pid 3 #ffffff');
    assert.equal(next.abort?.holder, 'ci@runner-8 pid 3 #ffffff');
  });

  test('the history is bounded: the oldest requests go first', () => {
    let s = emptyControl();
    for (let i = 0; i < CONTROL_HISTORY_LIMIT + 5; i++) s = apply(s, req(i % 2 === 0 ? 'pause' : 'resume', i % 10));
    assert.equal(s.history.length, CONTROL_HISTORY_LIMIT);
    assert.equal(s.history[0]!.action, 'resume', 'the first five (pause, resume, …) were dropped');
  });

  test('does not change its input', () => {
    const s = apply(emptyControl(), req('pause'));
    const copy = structuredClone(s);
    apply(s, req('resume'));
    assert.deepEqual(s, copy);
  });
});

describe('controlFor (what a runner is told)', () => {
  test('a pause holds back the runner of its revision only; an abort only the runner it was addressed to', () => {
    const state = apply(emptyControl(), req('pause', 1, 'rev1'));
    assert.deepEqual(controlFor(state, 'rev1', RUNNER), { paused: state.paused });
    assert.deepEqual(controlFor(state, 'rev2', RUNNER), {});
    const aborted = apply(emptyControl(), req('abort', 2));
    assert.deepEqual(controlFor(aborted, 'rev1', RUNNER), { abort: aborted.abort });
    assert.deepEqual(
      controlFor(aborted, 'rev1', 'someone@else pid 1 #000000'),
      {},
      'an abort of an earlier run does not stop the next one',
    );
    assert.deepEqual(controlFor(undefined, 'rev1', RUNNER), {});
  });
});

describe('control.json', () => {
  test('round trip; a damaged key means no request and says why', () => {
    const s = apply(apply(emptyControl(), req('pause', 1)), req('abort', 2));
    assert.deepEqual(decodeControl(encodeControl(s)), { state: s });
    assert.deepEqual(decodeControl(undefined), { state: emptyControl() });
    assert.match(decodeControl('{').problem!, /not valid JSON/);
    assert.match(decodeControl('{"paused": {"action": "stop"}}').problem!, /paused is not a request/);
  });

  test('the record reads it from its own key and the runner never writes it', () => {
    const record = newRecord({
      plan: 'web',
      revision: 'rev1',
      planText: 'x',
      holder: RUNNER,
      now: '2026-12-01T12:00:00.000Z',
    });
    const cm = recordConfigMap('default', record);
    const control = apply(emptyControl(), req('pause'));
    cm.data = { ...cm.data, [CONTROL_KEY]: encodeControl(control) };
    const decoded = decodeRecord(cm);
    assert.ok(decoded.ok);
    assert.deepEqual(decoded.record.control, control);
    assert.equal(CONTROL_KEY in encodeRecordData(decoded.record), false, "the runner's keys leave it alone");
  });
});

describe('the runner events paused and resumed in the record', () => {
  const ev = (body: RolloutEventBody, s: number): RolloutEvent =>
    ({ time: `2026-12-01T12:00:${String(s).padStart(2, '0')}.000Z`, plan: 'web', ...body }) as RolloutEvent;
  test('paused: phase Paused, waiting for resume with who; resumed: Progressing again; both in the history with who and when', () => {
    let r = newRecord({
      plan: 'web',
      revision: 'rev1',
      planText: 'x',
      holder: RUNNER,
      now: '2026-12-01T12:00:00.000Z',
    });
    r = applyEvent(
      r,
      ev(
        {
          event: 'rollout-start',
          revision: 'rev1',
          direction: 'upgrade',
          selected: 4,
          alreadyDone: 0,
          waves: 2,
          deferred: 0,
          budget: 1,
          concurrency: 1,
          resumed: false,
        },
        1,
      ),
    );
    r = applyEvent(
      r,
      ev(
        { event: 'paused', wave: 1, by: 'kwave-admin (alice@laptop)', at: '2026-12-01T12:00:01.500Z', inFlight: 2 },
        2,
      ),
    );
    assert.equal(r.phase, 'Paused');
    assert.deepEqual(r.waiting, {
      kind: 'paused',
      wave: 1,
      since: '2026-12-01T12:00:02.000Z',
      by: 'kwave-admin (alice@laptop)',
    });
    assert.equal(
      r.history.at(-1)!.message,
      'paused by kwave-admin (alice@laptop) (kwave pause at 2026-12-01T12:00:01.500Z): no new pod starts; 2 pods in flight finish',
    );
    r = applyEvent(r, ev({ event: 'resumed', wave: 1, by: 'bob@desk', at: '2026-12-01T12:00:09.000Z' }, 10));
    assert.equal(r.phase, 'Progressing');
    assert.equal(r.waiting, undefined);
    assert.equal(r.history.at(-1)!.message, 'resumed by bob@desk (kwave resume at 2026-12-01T12:00:09.000Z)');
    // The record still decodes (the new waiting kind is valid).
    const back = decodeRecord(
      recordConfigMap('default', applyEvent(r, ev({ event: 'paused', wave: 1, by: 'x', at: 'y', inFlight: 0 }, 11))),
    );
    assert.ok(back.ok, JSON.stringify(back));
  });
});

describe('a pause outranks the waits of gates', () => {
  test('a gate approval wait after the pause keeps waiting = paused (the gate is still listed as waiting-approval)', () => {
    const ev = (body: RolloutEventBody, s: number): RolloutEvent =>
      ({ time: `2026-12-01T12:01:${String(s).padStart(2, '0')}.000Z`, plan: 'web', ...body }) as RolloutEvent;
    let r = newRecord({
      plan: 'web',
      revision: 'rev1',
      planText: 'x',
      holder: RUNNER,
      now: '2026-12-01T12:00:00.000Z',
    });
    r = applyEvent(r, ev({ event: 'paused', wave: 1, by: 'alice', at: 'a', inFlight: 1 }, 1));
    r = applyEvent(r, ev({ event: 'gate-approval-wait', wave: 1, gate: 'sign-off' }, 2));
    assert.equal(r.waiting?.kind, 'paused');
    assert.equal(r.gates.at(-1)!.result, 'waiting-approval');
    r = applyEvent(r, ev({ event: 'gate-end', wave: 1, gate: 'sign-off', result: 'passed', message: '' }, 3));
    assert.equal(r.waiting?.kind, 'paused');
    assert.equal(r.phase, 'Paused');
  });
});
