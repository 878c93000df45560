import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createReporter } from '../../../src/cli/output/index.js';
import { EventLines } from '../../../src/cli/output/lines.js';
import { jsonLine } from '../../../src/cli/output/json.js';
import { summaryTable } from '../../../src/cli/output/summary.js';
import { columns } from '../../../src/cli/output/text.js';
import { captureIO, EventScript, rolloutScript } from './outputEvents.js';

const CLOCK = /^\d\d:\d\d:\d\d web /;

describe('-o json', () => {
  test('writes exactly one parseable object per event, common fields first', () => {
    const script = rolloutScript([1, 2]);
    const cap = captureIO();
    const r = createReporter({ io: cap.io, format: 'json', tty: false, plan: 'web' });
    script.events.forEach(r.sink);
    r.close();
    const lines = cap.text().trimEnd().split('\n');
    assert.equal(lines.length, script.events.length);
    lines.forEach((line, i) => {
      const obj = JSON.parse(line) as Record<string, unknown>;
      const e = script.events[i]!;
      assert.equal(obj.event, e.event);
      assert.equal(obj.plan, 'web');
      assert.equal(obj.time, e.time);
      assert.deepEqual(Object.keys(obj).slice(0, 3), ['time', 'plan', 'event']);
    });
  });

  test('puts wave and pod right after the common fields and keeps every other field', () => {
    const obj = JSON.parse(
      jsonLine({
        time: 't',
        plan: 'web',
        event: 'pod-end',
        result: 'failed',
        pod: 'web/a',
        wave: 2,
        reason: 'ErrImagePull',
        message: 'm',
        durationMs: 5,
      }),
    ) as Record<string, unknown>;
    assert.deepEqual(Object.keys(obj), [
      'time',
      'plan',
      'event',
      'wave',
      'pod',
      'result',
      'reason',
      'message',
      'durationMs',
    ]);
    assert.equal(obj.reason, 'ErrImagePull');
  });
});

describe('plain text', () => {
  test('says what happened, one line per event worth a line, each with time and plan', () => {
    const s = new EventScript();
    s.add({
      event: 'rollout-start',
      revision: 'abc',
      direction: 'upgrade',
      selected: 40,
      alreadyDone: 1,
      waves: 4,
      deferred: 0,
      budget: 5,
      concurrency: 3,
      resumed: false,
    });
    s.add({ event: 'wave-start', wave: 2, waves: 4, pods: 9, target: 10 });
    s.add({ event: 'pod-start', wave: 2, pod: 'web/web-3' });
    s.add({ event: 'pod-step', wave: 2, pod: 'web/web-3', step: 'patch', message: 'setting nginx' });
    s.add({ event: 'pod-end', wave: 2, pod: 'web/web-3', result: 'upgraded', message: 'upgraded', durationMs: 2100 });
    s.add({
      event: 'pod-end',
      wave: 2,
      pod: 'web/web-4',
      result: 'failed',
      reason: 'CrashLoopBackOff',
      message: 'back-off 10s',
      durationMs: 15_000,
    });
    s.add({
      event: 'budget-wait',
      wave: 2,
      unavailable: 5,
      budget: 5,
      holders: ['web/a', 'web/b', 'web/c', 'web/d', 'web/e'],
    });
    s.add({ event: 'gate-approval-wait', wave: 2, gate: 'ok' });
    s.add({ event: 'halt', wave: 2, reason: 'failures', message: '1 pod failed' });
    const lines = new EventLines({ approveHint: (w) => `kwave approve web.yaml --wave ${w}` });
    const out = s.events.flatMap((e) => lines.plain(e));
    for (const l of out) assert.match(l, CLOCK);
    const text = out.join('\n');
    assert.match(
      text,
      /rollout started: 40 pods \(1 already at target\), 4 waves, max 5 unavailable, 3 at a time, revision abc/,
    );
    assert.match(text, /web wave 2\/4 started: 9 pods \(target 10\)/);
    assert.match(text, /pod web\/web-3 upgraded in 2\.1s/);
    assert.match(text, /pod web\/web-4 FAILED after 15s: CrashLoopBackOff: back-off 10s/);
    assert.match(text, /waiting: 5\/5 pods unavailable \(budget 5\): web\/a, web\/b, web\/c, web\/d … 1 more/);
    assert.match(text, /waiting for approval of wave 2\/4 \(kwave approve web\.yaml --wave 2\)/);
    assert.match(text, /HALTED in wave 2\/4: 1 pod failed/);
    assert.doesNotMatch(text, /started$|setting nginx/m, 'pod-start and pod-step are quiet unless verbose');
    assert.equal(out.length, 7);
  });

  test('verbose adds pod starts and steps', () => {
    const s = new EventScript()
      .add({ event: 'pod-start', wave: 1, pod: 'web/a' })
      .add({ event: 'pod-step', wave: 1, pod: 'web/a', step: 'patch', message: 'setting nginx' });
    const lines = new EventLines({ verbose: true });
    const out = s.events.flatMap((e) => lines.plain(e));
    assert.equal(out.length, 2);
    assert.match(out[1]!, /pod web\/a patch: setting nginx/);
  });

  test('throttles budget waits: a new wait after 10 s, a reminder after 30 s', () => {
    const s = new EventScript();
    const wait = () => s.add({ event: 'budget-wait', wave: 1, unavailable: 2, budget: 2, holders: ['web/x'] });
    wait(); // printed: first
    s.wait(1000);
    wait(); // same wait, 1 s later: quiet
    s.wait(20_000);
    wait(); // 21 s into the same wait: quiet (reminders every 30 s)
    s.wait(10_000);
    wait(); // 31 s: reminder
    s.add({ event: 'pod-start', wave: 1, pod: 'web/y' }); // the wait ended
    s.wait(2000);
    wait(); // a new wait 2 s after the last line: quiet
    s.add({ event: 'pod-start', wave: 1, pod: 'web/z' });
    s.wait(9000);
    wait(); // a new wait 11 s after the last line: printed
    const lines = new EventLines();
    const printed = s.events.map((e) => lines.plain(e).length);
    assert.deepEqual(printed, [1, 0, 0, 1, 0, 0, 0, 1]);
  });

  test('announces a pause, an approval or a window once, not at every tick', () => {
    const s = new EventScript();
    for (const ms of [3000, 2000, 1000]) s.add({ event: 'gate-pause', wave: 1, gate: 'soak', msLeft: ms });
    s.add({ event: 'gate-approval-wait', wave: 1, gate: 'ok' }).add({
      event: 'gate-approval-wait',
      wave: 1,
      gate: 'ok',
    });
    s.add({ event: 'window-wait', wave: 2, msLeft: 60_000, opensAt: '2030-01-02T13:00:00Z' }).add({
      event: 'window-wait',
      wave: 2,
      msLeft: 30_000,
      opensAt: '2030-01-02T13:00:00Z',
    });
    const lines = new EventLines();
    assert.deepEqual(
      s.events.map((e) => lines.plain(e).length),
      [1, 0, 0, 1, 0, 1, 0],
    );
  });

  test('ends with the summary table and a final line with the phase', () => {
    const script = rolloutScript([1, 2, 3], { failing: 'web/web-4' });
    const cap = captureIO();
    const r = createReporter({ io: cap.io, format: 'text', tty: false, plan: 'web' });
    script.events.forEach(r.sink);
    r.close();
    const lines = cap.text().trimEnd().split('\n');
    assert.match(lines.at(-1)!, /^\d\d:\d\d:\d\d web Completed in \d+s: 6 pods upgraded$/);
    assert.match(lines.at(-6)!, /^wave\s+pods\s+upgraded\s+failed\s+vanished\s+duration$/);
    assert.match(lines.at(-3)!, /^\s+3\s+3\s+2\s+1\s+0\s+6\.3s$/);
    assert.match(lines.at(-2)!, /^total\s+6\s+5\s+1\s+0\s+13s$/);
    // Every pod's end is there: nothing lost.
    assert.equal(lines.filter((l) => / pod web\/web-\d+ (upgraded|FAILED)/.test(l)).length, 6);
    assert.match(cap.text(), /wave 3\/3 done in 6\.3s: 2\/3 upgraded, 1 failed/);
  });

  test('loses no line over a long rollout', () => {
    const script = rolloutScript([1, 10, 100, 389], { podMs: 10 });
    const cap = captureIO();
    const r = createReporter({ io: cap.io, format: 'text', tty: false, plan: 'web' });
    script.events.forEach(r.sink);
    r.close();
    const text = cap.text();
    for (let i = 0; i < 500; i++) assert.ok(text.includes(`pod web/web-${i} upgraded`), `web-${i}`);
    assert.equal((text.match(/ done in /g) ?? []).length, 4);
  });
});

describe('summaryTable', () => {
  test('aligns every column: all rows end at the same width, numbers right-aligned', () => {
    const rows = summaryTable([
      { wave: 1, pods: 1, upgraded: 1, failed: 0, vanished: 0, durationMs: 2100 },
      { wave: 2, pods: 10, upgraded: 9, failed: 1, vanished: 0, durationMs: 12_345 },
      { wave: 10, pods: 1500, upgraded: 1490, failed: 0, vanished: 10, durationMs: 3_725_000 },
      { wave: 11, pods: 20, upgraded: 0, failed: 0, vanished: 0 },
    ]);
    assert.equal(rows.length, 6);
    const width = rows[0]!.length;
    for (const r of rows) assert.equal(r.length, width, JSON.stringify(rows));
    // Column ends line up: the last character of each header word sits above the digits' end.
    const header = rows[0]!;
    for (const word of ['pods', 'upgraded', 'failed', 'vanished', 'duration']) {
      const end = header.indexOf(word) + word.length - 1;
      for (const r of rows.slice(1)) assert.notEqual(r[end], ' ', `${word} column in ${JSON.stringify(r)}`);
    }
    assert.match(rows[4]!, /\s-$/, 'a wave that did not run has no duration');
    assert.match(rows[5]!, /^total\s+1531\s+1500\s+1\s+10\s+1h02m$/);
  });

  test('is empty without waves', () => {
    assert.deepEqual(summaryTable([]), []);
  });
});

describe('format helpers', () => {
  test('columns pad to the widest cell', () => {
    assert.deepEqual(
      columns(
        [
          ['a', '1'],
          ['bbb', '22'],
        ],
        new Set([1]),
      ),
      ['a     1', 'bbb  22'],
    );
  });
});

describe('jsonLine', () => {
  test('is the event as JSON.stringify writes it, with the common fields first', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.oneof(fc.jsonValue(), fc.constant(undefined))),
        fc.string(),
        (extra, pod) => {
          const event = { ...extra, event: 'pod-step', pod, time: 't', plan: 'web' } as unknown as Parameters<
            typeof jsonLine
          >[0];
          const line = jsonLine(event);
          const parsed = JSON.parse(line) as Record<string, unknown>;
          assert.deepEqual(parsed, JSON.parse(JSON.stringify(event)));
          assert.ok(line.startsWith(`{"time":"t","plan":"web","event":"pod-step","pod":${JSON.stringify(pod)}`), line);
        },
      ),
    );
  });

  test('writes an event made in its line order as one written key by key would be', () => {
    const leading = ['time', 'plan', 'cluster', 'event', 'wave', 'pod'];
    const byKey = (fields: Record<string, unknown>) => {
      const keys = [...leading.filter((k) => k in fields), ...Object.keys(fields).filter((k) => !leading.includes(k))];
      const parts = keys.flatMap((k) => {
        const text = JSON.stringify(fields[k]);
        return text === undefined ? [] : [`${JSON.stringify(k)}:${text}`];
      });
      return `{${parts.join(',')}}`;
    };
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.oneof(fc.jsonValue(), fc.constant(undefined))),
        fc.option(fc.integer()),
        fc.option(fc.string()),
        (extra, wave, cluster) => {
          const fields = {
            time: 't',
            plan: 'web',
            ...(cluster === null ? {} : { cluster }),
            event: 'pod-step',
            ...(wave === null ? {} : { wave }),
            pod: 'web/a',
            ...extra,
          };
          assert.equal(jsonLine(fields as unknown as Parameters<typeof jsonLine>[0]), byKey(fields));
        },
      ),
    );
  });
});
