// The rollout record: the reducer over the runner's events, and the ConfigMap encoding.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RolloutEvent, RolloutEventBody } from '../../../src/rollout/events.js';
import {
  LIMITS,
  PLAN_KEY,
  STATUS_KEY,
  newRecord,
  startRecord,
  type RolloutRecord,
} from '../../../src/record/record.js';
import { applyEvent, isTransition } from '../../../src/record/reducer.js';
import {
  approvalKey,
  decodeApprovals,
  decodeRecord,
  encodeApproval,
  encodeRecordData,
  recordConfigMap,
} from '../../../src/record/codec.js';

const T0 = Date.parse('2025-03-01T10:00:00.000Z');
let tick = 0;
/** An event at T0 + n seconds (n increasing per call unless given). */
function ev(body: RolloutEventBody, at?: number): RolloutEvent {
  const time = new Date(T0 + (at ?? ++tick) * 1000).toISOString();
  return { time, plan: 'web', ...body } as RolloutEvent;
}

function fresh(): RolloutRecord {
  return newRecord({
    plan: 'web',
    revision: 'abc1234567',
    planText: 'kind: RolloutPlan\n',
    holder: 'me@host pid 1',
    now: new Date(T0).toISOString(),
  });
}

const start = (over: Partial<Extract<RolloutEventBody, { event: 'rollout-start' }>> = {}): RolloutEventBody => ({
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
  ...over,
});

const fold = (events: RolloutEventBody[], from = fresh()) => events.reduce((r, e) => applyEvent(r, ev(e)), from);

describe('applyEvent', () => {
  test('rollout-start sets phase, waves and counts: pending = selected - done, deferred pods included', () => {
    const r = fold([start({ deferred: 3 })]);
    assert.equal(r.phase, 'Progressing');
    assert.equal(r.waves, 3);
    assert.equal(r.wave, 0);
    assert.deepEqual(r.counts, { pending: 8, in_progress: 0, upgraded: 0, failed: 0, skipped: 2, vanished: 0 });
    assert.equal(r.deferred, 3);
    assert.equal(r.history.length, 1);
  });

  test('a resumed run counts the pods this revision upgraded earlier as upgraded, the others done as skipped', () => {
    const r = fold([start({ alreadyDone: 5, upgradedEarlier: 3, resumed: true })]);
    assert.deepEqual(r.counts, { pending: 5, in_progress: 0, upgraded: 3, failed: 0, skipped: 2, vanished: 0 });
  });

  test('pods move pending → in_progress → their result; in-flight list follows steps', () => {
    let r = fold([
      start(),
      { event: 'wave-start', wave: 1, waves: 3, pods: 3, target: 3 },
      { event: 'pod-start', wave: 1, pod: 'ns/a' },
      { event: 'pod-start', wave: 1, pod: 'ns/b' },
    ]);
    assert.equal(r.wave, 1);
    assert.equal(r.counts.pending, 6);
    assert.equal(r.counts.in_progress, 2);
    assert.deepEqual(
      r.inFlight.map((p) => [p.pod, p.step]),
      [
        ['ns/a', 'started'],
        ['ns/b', 'started'],
      ],
    );
    r = fold([{ event: 'pod-step', wave: 1, pod: 'ns/a', step: 'patched', message: '' }], r);
    assert.equal(r.inFlight.find((p) => p.pod === 'ns/a')?.step, 'patched');
    r = fold(
      [
        { event: 'pod-end', wave: 1, pod: 'ns/a', result: 'upgraded', message: 'ok', durationMs: 10 },
        {
          event: 'pod-end',
          wave: 1,
          pod: 'ns/b',
          result: 'failed',
          reason: 'ErrImagePull',
          message: 'pull failed',
          durationMs: 10,
        },
        { event: 'pod-start', wave: 1, pod: 'ns/c' },
        { event: 'pod-end', wave: 1, pod: 'ns/c', result: 'vanished', message: 'deleted', durationMs: 1 },
        { event: 'pod-start', wave: 1, pod: 'ns/d' },
        { event: 'pod-end', wave: 1, pod: 'ns/d', result: 'aborted', message: 'interrupted', durationMs: 1 },
      ],
      r,
    );
    assert.deepEqual(r.counts, { pending: 5, in_progress: 0, upgraded: 1, failed: 1, skipped: 2, vanished: 1 });
    assert.deepEqual(r.inFlight, []);
    assert.equal(r.failures.length, 1);
    assert.equal(r.failures[0]?.reason, 'ErrImagePull');
    assert.equal(r.failuresTotal, 1);
  });

  test('counts never go negative, whatever the order of events', () => {
    const r = fold([{ event: 'pod-end', wave: 1, pod: 'x', result: 'upgraded', message: '', durationMs: 0 }]);
    assert.ok(Object.values(r.counts).every((n) => n >= 0));
  });

  test('gates: pause sets waiting with an end time; approval wait, then gate-end clears it', () => {
    let r = fold([
      start(),
      { event: 'gate-start', wave: 1, gate: 'soak' },
      { event: 'gate-pause', wave: 1, gate: 'soak', msLeft: 30_000 },
    ]);
    assert.equal(r.waiting?.kind, 'pause');
    assert.equal(Date.parse(r.waiting!.until!) - Date.parse(r.updatedAt), 30_000);
    const since = r.waiting!.since;
    r = fold([{ event: 'gate-pause', wave: 1, gate: 'soak', msLeft: 20_000 }], r);
    assert.equal(r.waiting?.since, since, 'a countdown keeps the start of the pause');
    r = fold([{ event: 'gate-approval-wait', wave: 1, gate: 'soak' }], r);
    assert.deepEqual([r.waiting?.kind, r.waiting?.wave], ['approval', 1]);
    assert.equal(r.gates.length, 1);
    assert.equal(r.gates[0]?.result, 'waiting-approval');
    r = fold([{ event: 'gate-end', wave: 1, gate: 'soak', result: 'passed', message: 'approved by alice' }], r);
    assert.equal(r.waiting, undefined);
    assert.deepEqual([r.gates[0]?.result, r.gates[0]?.message], ['passed', 'approved by alice']);
  });

  test('measurements are kept on their gate, bounded', () => {
    const events: RolloutEventBody[] = [{ event: 'gate-start', wave: 2, gate: 'errors' }];
    for (let i = 1; i <= LIMITS.measurements + 5; i++)
      events.push({
        event: 'gate-measurement',
        wave: 2,
        gate: 'errors',
        index: i,
        count: 30,
        value: 0.01,
        phase: 'successful',
        message: `m${i}`,
      });
    const r = fold(events);
    const ms = r.gates[0]?.measurements ?? [];
    assert.equal(ms.length, LIMITS.measurements);
    assert.equal(ms[ms.length - 1]?.message, `m${LIMITS.measurements + 5}`);
  });

  test('window-wait records when the window opens; wave-start ends the wait', () => {
    let r = fold([start(), { event: 'window-wait', wave: 1, msLeft: 3_600_000, opensAt: '2025-03-01T12:00:00.000Z' }]);
    assert.deepEqual([r.waiting?.kind, r.waiting?.until], ['window', '2025-03-01T12:00:00.000Z']);
    r = fold([{ event: 'wave-start', wave: 1, waves: 3, pods: 1, target: 1 }], r);
    assert.equal(r.waiting, undefined);
  });

  test('halt then rollback of the failed: counts keep what the upgrade did, rollback progress apart', () => {
    const r = fold([
      start({ alreadyDone: 0, selected: 4 }),
      { event: 'wave-start', wave: 1, waves: 3, pods: 2, target: 2 },
      { event: 'pod-start', wave: 1, pod: 'p1' },
      {
        event: 'pod-end',
        wave: 1,
        pod: 'p1',
        result: 'failed',
        reason: 'CrashLoopBackOff',
        message: 'crash',
        durationMs: 5,
      },
      { event: 'halt', wave: 1, reason: 'failures', message: '1 failed > maxFailed 0' },
      { event: 'rollback-start', pods: 1, scope: 'failed' },
      { event: 'pod-start', wave: 1, pod: 'p1' },
      { event: 'pod-end', wave: 1, pod: 'p1', result: 'rolled-back', message: 'back', durationMs: 5 },
      { event: 'rollout-end', phase: 'Halted', exitCode: 3, message: 'halted', waves: [], durationMs: 100 },
    ]);
    assert.equal(r.phase, 'Halted');
    assert.equal(r.exitCode, 3);
    assert.deepEqual(r.counts, { pending: 3, in_progress: 0, upgraded: 0, failed: 1, skipped: 0, vanished: 0 });
    assert.deepEqual(r.rollback, { scope: 'failed', pods: 1, done: 1, failed: 0 });
    assert.ok(r.endedAt);
    assert.ok(r.history.some((h) => h.event === 'halt'));
  });

  test('a rollback target found never patched (drained only, its gate reopened) counts as done (chaos on real, seed 325791685)', () => {
    const r = fold([
      start({ alreadyDone: 0, selected: 2 }),
      { event: 'halt', wave: 1, reason: 'failures', message: 'halted' },
      { event: 'rollback-start', pods: 2, scope: 'all' },
      { event: 'pod-end', wave: 1, pod: 'p1', result: 'rolled-back', message: 'back', durationMs: 5 },
      {
        event: 'pod-end',
        wave: 0,
        pod: 'p2',
        result: 'skipped',
        reason: 'NothingToRollBack',
        message: 'this revision of the plan never patched the pod',
        durationMs: 2,
      },
    ]);
    assert.deepEqual(r.rollback, { scope: 'all', pods: 2, done: 2, failed: 0 });
  });

  test('a rollback run counts reverted pods where upgrades go', () => {
    const r = fold([
      start({ direction: 'rollback', alreadyDone: 0, selected: 1 }),
      { event: 'pod-start', wave: 1, pod: 'p' },
      { event: 'pod-end', wave: 1, pod: 'p', result: 'rolled-back', message: '', durationMs: 1 },
      {
        event: 'rollout-end',
        phase: 'RolledBack',
        exitCode: 0,
        message: 'done',
        waves: [{ wave: 1, pods: 1, upgraded: 1, failed: 0, vanished: 0, durationMs: 5 }],
        durationMs: 5,
      },
    ]);
    assert.equal(r.counts.upgraded, 1);
    assert.equal(r.phase, 'RolledBack');
    assert.equal(r.waveSummaries.length, 1);
  });

  test('history leaves out pod progress, collapses repeated waits, and is bounded', () => {
    const events: RolloutEventBody[] = [start()];
    for (let i = 0; i < 10; i++) events.push({ event: 'budget-wait', wave: 1, unavailable: 2, budget: 2, holders: [] });
    for (let i = 0; i < 300; i++) {
      events.push(
        { event: 'pod-start', wave: 1, pod: `p${i}` },
        { event: 'pod-step', wave: 1, pod: `p${i}`, step: 's', message: '' },
      );
      events.push({
        event: 'pod-end',
        wave: 1,
        pod: `p${i}`,
        result: i % 2 ? 'upgraded' : 'failed',
        reason: 'X',
        message: 'm',
        durationMs: 1,
      });
    }
    const r = fold(events);
    assert.equal(r.history.length, LIMITS.history);
    assert.ok(r.history.every((h) => h.event !== 'pod-start' && h.event !== 'pod-step'));
    assert.equal(r.failures.length, LIMITS.failures);
    assert.equal(r.failuresTotal, 150);
    const fewer = fold([
      start(),
      ...Array.from(
        { length: 5 },
        () => ({ event: 'budget-wait', wave: 1, unavailable: 2, budget: 2, holders: [] }) as RolloutEventBody,
      ),
    ]);
    assert.equal(fewer.history.filter((h) => h.event === 'budget-wait').length, 1);
  });

  test('does not change its input', () => {
    const r = fresh();
    const copy = structuredClone(r);
    applyEvent(r, ev(start()));
    assert.deepEqual(r, copy);
  });

  test('transitions flush; pod progress does not', () => {
    assert.equal(isTransition(ev({ event: 'wave-start', wave: 1, waves: 2, pods: 1, target: 1 })), true);
    assert.equal(isTransition(ev({ event: 'pod-step', wave: 1, pod: 'p', step: 's', message: '' })), false);
    assert.equal(
      isTransition(ev({ event: 'pod-end', wave: 1, pod: 'p', result: 'upgraded', message: '', durationMs: 1 })),
      false,
    );
    assert.equal(
      isTransition(ev({ event: 'pod-end', wave: 1, pod: 'p', result: 'failed', message: '', durationMs: 1 })),
      true,
    );
  });
});

describe('startRecord', () => {
  test('same revision continues the stored record; another starts fresh but keeps history', () => {
    const stored = fold([start(), { event: 'wave-start', wave: 1, waves: 3, pods: 1, target: 1 }]);
    const input = {
      plan: 'web',
      revision: 'abc1234567',
      planText: 'new text',
      holder: 'other',
      now: new Date(T0 + 99_000).toISOString(),
    };
    const same = startRecord(stored, input);
    assert.equal(same.wave, 1);
    assert.equal(same.holder, 'other');
    const other = startRecord(stored, { ...input, revision: 'ffff000000' });
    assert.equal(other.wave, 0);
    assert.equal(other.revision, 'ffff000000');
    assert.deepEqual(other.history, stored.history);
    assert.equal(startRecord(undefined, input).phase, 'Pending');
  });
});

describe('encoding', () => {
  test('round trip: ConfigMap data back to the same record; plan text under its own key', () => {
    const r = fold([
      start(),
      { event: 'gate-start', wave: 1, gate: 'g' },
      { event: 'gate-pause', wave: 1, gate: 'g', msLeft: 1000 },
    ]);
    const cm = recordConfigMap('web', r);
    assert.equal(cm.metadata?.name, 'kwave-web');
    assert.deepEqual(cm.metadata?.labels, { 'app.kubernetes.io/managed-by': 'kwave', 'kwave.dev/plan': 'web' });
    assert.equal(cm.data?.[PLAN_KEY], r.planText);
    assert.ok(!cm.data?.[STATUS_KEY]?.includes('RolloutPlan'), 'status.json does not repeat the plan text');
    const decoded = decodeRecord({ ...cm, metadata: { ...cm.metadata, resourceVersion: '7' } });
    assert.ok(decoded.ok);
    if (decoded.ok) {
      assert.deepEqual(decoded.record, JSON.parse(JSON.stringify(r)));
      assert.equal(decoded.resourceVersion, '7');
    }
  });

  test('approvals come from their own keys; malformed ones are ignored', () => {
    const r = fresh();
    const data = {
      ...encodeRecordData(r),
      [approvalKey(2)]: encodeApproval({ by: 'alice@laptop', at: '2025-03-01T10:05:00.000Z', revision: 'abc1234567' }),
      [approvalKey(3)]: '{not json',
      'approval.wave-x': '{"by":"a","at":"b"}',
      [approvalKey(4)]: '{"by":1}',
    };
    const decoded = decodeRecord({ data });
    assert.ok(decoded.ok);
    if (decoded.ok)
      assert.deepEqual(decoded.record.approvals, {
        2: { by: 'alice@laptop', at: '2025-03-01T10:05:00.000Z', revision: 'abc1234567' },
      });
    assert.deepEqual(Object.keys(decodeApprovals(data)), ['2']);
  });

  test('a damaged record is reported, never thrown', () => {
    const good = encodeRecordData(fresh());
    const status = JSON.parse(good[STATUS_KEY]!) as Record<string, unknown>;
    const cases: [string, Record<string, string>, RegExp][] = [
      ['no status key', { [PLAN_KEY]: 'x' }, /no status\.json/],
      ['not JSON', { [STATUS_KEY]: '{' }, /not valid JSON/],
      ['an array', { [STATUS_KEY]: '[]' }, /JSON object/],
      ['wrong schema', { [STATUS_KEY]: JSON.stringify({ ...status, schema: 'v0' }) }, /schema/],
      ['bad phase', { [STATUS_KEY]: JSON.stringify({ ...status, phase: 'Running' }) }, /phase/],
      [
        'negative count',
        { [STATUS_KEY]: JSON.stringify({ ...status, counts: { ...(status.counts as object), failed: -1 } }) },
        /counts/,
      ],
      ['bad in-flight', { [STATUS_KEY]: JSON.stringify({ ...status, inFlight: [{ pod: 1 }] }) }, /inFlight/],
      ['bad waiting', { [STATUS_KEY]: JSON.stringify({ ...status, waiting: { kind: 'nap' } }) }, /waiting/],
    ];
    for (const [name, data, expected] of cases) {
      const decoded = decodeRecord({ data: { ...data, [approvalKey(1)]: encodeApproval({ by: 'a', at: 'b' }) } });
      assert.equal(decoded.ok, false, name);
      if (!decoded.ok) {
        assert.match(decoded.problem, expected, name);
        assert.ok(decoded.approvals[1], `${name}: approvals still read`);
      }
    }
    assert.equal(decodeRecord({}).ok, false);
  });
});
