// `kwave status` rendering: every part of the record a person needs, from a record and a clock.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { renderStatus, statusJson } from '../../../src/cli/statusView.js';
import type { RolloutEvent, RolloutEventBody } from '../../../src/rollout/events.js';
import { newRecord, type RolloutRecord } from '../../../src/record/record.js';
import { applyEvent } from '../../../src/record/reducer.js';
import { leaseView } from '../../../src/lease/leaseView.js';

const T0 = Date.parse('2025-03-01T10:00:00.000Z');
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

function build(events: [number, RolloutEventBody][]): RolloutRecord {
  const start = newRecord({ plan: 'web', revision: 'abc1234567', planText: '', holder: 'me', now: iso(0) });
  return events.reduce((r, [s, body]) => applyEvent(r, { time: iso(s), plan: 'web', ...body } as RolloutEvent), start);
}

const running = build([
  [
    0,
    {
      event: 'rollout-start',
      revision: 'abc1234567',
      direction: 'upgrade',
      selected: 20,
      alreadyDone: 1,
      waves: 3,
      deferred: 0,
      budget: 2,
      concurrency: 2,
      resumed: false,
    },
  ],
  [1, { event: 'wave-start', wave: 1, waves: 3, pods: 1, target: 1 }],
  [2, { event: 'pod-start', wave: 1, pod: 'web/a' }],
  [5, { event: 'pod-end', wave: 1, pod: 'web/a', result: 'upgraded', message: '', durationMs: 3000 }],
  [
    5,
    {
      event: 'wave-end',
      wave: 1,
      summary: { wave: 1, pods: 1, upgraded: 1, failed: 0, vanished: 0, durationMs: 3000 },
    },
  ],
  [6, { event: 'gate-start', wave: 1, gate: 'soak' }],
  [6, { event: 'gate-end', wave: 1, gate: 'soak', result: 'passed', message: 'paused 0s' }],
  [7, { event: 'wave-start', wave: 2, waves: 3, pods: 9, target: 10 }],
  [8, { event: 'pod-start', wave: 2, pod: 'web/b' }],
  [9, { event: 'pod-step', wave: 2, pod: 'web/b', step: 'image-patched', message: '' }],
  [10, { event: 'pod-start', wave: 2, pod: 'web/c' }],
  [
    12,
    {
      event: 'pod-end',
      wave: 2,
      pod: 'web/c',
      result: 'failed',
      reason: 'ErrImagePull',
      message: 'pull of nginx:broken failed',
      durationMs: 2000,
    },
  ],
]);

describe('renderStatus', () => {
  test('phase, wave i of n, counts, pods in flight with step and age, failures, gates, lock', () => {
    const lease = leaseView(
      { spec: { holderIdentity: 'alice@laptop pid 42', leaseDurationSeconds: 15, renewTime: iso(60) as never } },
      new Date(T0 + 62_000),
    );
    const text = renderStatus({
      record: running,
      namespace: 'web',
      lock: lease,
      planFile: 'plans/web.yaml',
      now: new Date(T0 + 62_000),
    });
    assert.match(text, /^plan web \(revision abc1234567, upgrade\) in namespace web: Progressing$/m);
    assert.match(text, /^wave 2 of 3 · started 1m02s ago, updated 50s ago$/m);
    assert.match(
      text,
      /^pods: 1 upgraded, 1 in progress, 16 pending, 1 failed, 1 skipped, 0 vanished \(20 selected\)$/m,
    );
    assert.match(text, /^in flight \(1\):\n {2}web\/b {2}wave 2 {2}image-patched {2}54s$/m);
    assert.match(text, /^failures \(1\):\n {2}web\/c {2}wave 2 {2}ErrImagePull {2}pull of nginx:broken failed$/m);
    assert.match(text, /^gates:\n {2}after wave 1 {2}soak {2}passed {2}paused 0s$/m);
    assert.match(text, /^ {2}wave 1 {2}1 pod {2}1 upgraded {2}0 failed {2}0 vanished {2}3\.0s$/m); // one formatter with `kwave run`'s output: a decimal below 10 s
    assert.match(text, /^lock: held by alice@laptop pid 42 \(renewed 2s ago/m);
  });

  test('every measurement of the current gate: index, time, value, phase and the condition matched; a dry run says what would have happened', () => {
    const r = build([
      [
        0,
        {
          event: 'rollout-start',
          revision: 'r',
          direction: 'upgrade',
          selected: 2,
          alreadyDone: 0,
          waves: 2,
          deferred: 0,
          budget: 1,
          concurrency: 1,
          resumed: false,
        },
      ],
      [5, { event: 'gate-start', wave: 1, gate: 'error-rate' }],
      [
        6,
        {
          event: 'gate-measurement',
          wave: 1,
          gate: 'error-rate',
          index: 1,
          count: 3,
          value: 0,
          phase: 'successful',
          message: 'result 0 matched successCondition result < 0.01',
          dryRun: true,
        },
      ],
      [
        9,
        {
          event: 'gate-measurement',
          wave: 1,
          gate: 'error-rate',
          index: 2,
          count: 3,
          value: 0.5,
          phase: 'failed',
          message: 'result 0.5 matched failureCondition result >= 0.05',
          dryRun: true,
        },
      ],
      [
        9,
        {
          event: 'gate-end',
          wave: 1,
          gate: 'error-rate',
          result: 'passed',
          message:
            'error-rate: dry run; would have failed: result 0.5 matched failureCondition result >= 0.05 at measurement 2 of 3',
          wouldHave: {
            result: 'failed',
            message: 'error-rate: result 0.5 matched failureCondition result >= 0.05 at measurement 2 of 3',
          },
        },
      ],
    ]);
    const text = renderStatus({ record: r, namespace: 'web', now: new Date(T0 + 20_000) });
    assert.match(
      text,
      /^ {2}after wave 1 {2}error-rate {2}passed \(dry run: would have failed\) {2}error-rate: dry run; would have failed: /m,
    );
    assert.match(text, /^measurements of gate error-rate after wave 1 \(dry run\) \(2 of 3\):$/m);
    assert.match(
      text,
      new RegExp(
        `^ {2}1 {2}${iso(6).replace(/\./g, '\\.')} {2}value 0 {4}successful {2}result 0 matched successCondition result < 0\\.01$`,
        'm',
      ),
    );
    assert.match(
      text,
      /^ {2}2 {2}\S+ {2}value 0\.5 {2}failed {6}result 0\.5 matched failureCondition result >= 0\.05$/m,
    );
    const json = statusJson({ record: r, namespace: 'web', now: new Date(T0 + 20_000) }) as {
      gates: { wouldHave?: { result: string }; dryRun?: boolean }[];
    };
    assert.equal(json.gates[0]?.wouldHave?.result, 'failed');
    assert.equal(json.gates[0]?.dryRun, true);
  });

  test('a pause shows the time left; an approval wait says how to approve', () => {
    const paused = build([
      [
        0,
        {
          event: 'rollout-start',
          revision: 'r',
          direction: 'upgrade',
          selected: 2,
          alreadyDone: 0,
          waves: 2,
          deferred: 0,
          budget: 1,
          concurrency: 1,
          resumed: false,
        },
      ],
      [10, { event: 'gate-pause', wave: 1, gate: 'soak', msLeft: 120_000 }],
    ]);
    assert.match(
      renderStatus({ record: paused, namespace: 'web', now: new Date(T0 + 40_000) }),
      /^paused after wave 1 \(gate soak\): 1m30s left/m,
    );
    const waiting = applyEvent(paused, {
      time: iso(200),
      plan: 'web',
      event: 'gate-approval-wait',
      wave: 1,
      gate: 'ok',
    });
    const text = renderStatus({ record: waiting, namespace: 'web', planFile: 'p.yaml', now: new Date(T0 + 260_000) });
    assert.match(
      text,
      /^waiting for approval of wave 1 \(gate ok\) before wave 2 for 1m00s: run `kwave approve p.yaml --wave 1`$/m,
    );
    assert.match(text, /^lock: free/m);
  });

  test('a window wait shows when it opens; approvals are listed', () => {
    const r = build([
      [
        0,
        {
          event: 'rollout-start',
          revision: 'r',
          direction: 'upgrade',
          selected: 2,
          alreadyDone: 0,
          waves: 2,
          deferred: 1,
          budget: 1,
          concurrency: 1,
          resumed: false,
        },
      ],
      [0, { event: 'window-wait', wave: 2, msLeft: 3_600_000, opensAt: iso(3600) }],
    ]);
    const withApproval = { ...r, approvals: { 1: { by: 'bob@desk', at: iso(-60) } } };
    const text = renderStatus({ record: withApproval, namespace: 'web', now: new Date(T0) });
    assert.match(text, /^waiting for the window before wave 2: opens in 1h00m/m);
    assert.match(text, /^approvals:\n {2}wave 1 {2}by bob@desk {2}1m00s ago$/m);
    assert.match(text, /1 left for a later plan/);
  });

  test('an ended rollout shows its result and how long it took', () => {
    const done = applyEvent(running, {
      time: iso(125),
      plan: 'web',
      event: 'rollout-end',
      phase: 'Halted',
      exitCode: 3,
      message: '1 pod failed (limit 0): web/c ErrImagePull',
      waves: [],
      durationMs: 125_000,
    });
    const text = renderStatus({ record: done, namespace: 'web', now: new Date(T0 + 200_000) });
    assert.match(text, /: Halted$/m);
    assert.match(text, /ended 1m15s ago after 2m05s/);
    assert.match(text, /^result: 1 pod failed \(limit 0\): web\/c ErrImagePull$/m);
  });
});

describe('statusJson', () => {
  test('the record as one object, with namespace and lock', () => {
    const obj = statusJson({ record: running, namespace: 'web', now: new Date(T0) });
    assert.equal(obj.phase, 'Progressing');
    assert.equal(obj.namespace, 'web');
    assert.equal(obj.lock, null);
    assert.deepEqual(JSON.parse(JSON.stringify(obj)).counts, running.counts);
  });
});
