import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Window } from '../../../src/plan/types.js';
import { isOpenAt, localTime, windowState } from '../../../src/rollout/window.js';

const entry = (days: number[], start: string, end: string) => {
  const m = (s: string) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3));
  return { days, startMinute: m(start), endMinute: m(end), text: `${start}-${end}` };
};
const weekdays = [1, 2, 3, 4, 5];

describe('maintenance windows', () => {
  test('local time follows the timezone', () => {
    // 2026-11-30 is a Monday; 01:30 UTC is 02:30 in Berlin (CET, UTC+1).
    assert.deepEqual(localTime(Date.UTC(2026, 10, 30, 1, 30), 'Europe/Berlin'), { day: 1, minute: 150 });
    assert.deepEqual(localTime(Date.UTC(2026, 10, 30, 1, 30), 'UTC'), { day: 1, minute: 90 });
  });

  test('an entry covers its days and hours, end excluded', () => {
    const w: Window = { timezone: 'UTC', allow: [entry(weekdays, '02:00', '05:00')] };
    assert.equal(isOpenAt(w, { day: 1, minute: 120 }), true);
    assert.equal(isOpenAt(w, { day: 1, minute: 299 }), true);
    assert.equal(isOpenAt(w, { day: 1, minute: 300 }), false);
    assert.equal(isOpenAt(w, { day: 6, minute: 180 }), false);
  });

  test('an entry ending before it starts runs into the next day', () => {
    const w: Window = { timezone: 'UTC', allow: [entry([5], '22:00', '04:00')] };
    assert.equal(isOpenAt(w, { day: 5, minute: 23 * 60 }), true); // Friday 23:00
    assert.equal(isOpenAt(w, { day: 6, minute: 3 * 60 }), true); // Saturday 03:00
    assert.equal(isOpenAt(w, { day: 6, minute: 23 * 60 }), false); // Saturday 23:00
    assert.equal(isOpenAt(w, { day: 5, minute: 3 * 60 }), false); // Friday 03:00: Thursday is not listed
  });

  test('when closed, the state says when it opens next', () => {
    const w: Window = { timezone: 'Europe/Berlin', allow: [entry(weekdays, '02:00', '05:00')] };
    // Saturday 2026-11-28 12:00 UTC → next opening Monday 02:00 Berlin = Monday 01:00 UTC.
    const s = windowState(w, Date.UTC(2026, 10, 28, 12, 0));
    assert.deepEqual(s, { open: false, opensAtMs: Date.UTC(2026, 10, 30, 1, 0) });
    assert.deepEqual(windowState(w, Date.UTC(2026, 10, 30, 1, 0)), { open: true });
  });
});

describe('maintenance windows across a daylight-saving change (Europe/Berlin, 2026)', () => {
  const sunday = (start: string, end: string): Window => ({
    timezone: 'Europe/Berlin',
    allow: [entry([0], start, end)],
  });
  const sampled = (w: Window, fromMs: number, toMs: number) => {
    // Open minutes, counted in UTC: what the window gives on the day.
    let open = 0;
    for (let ms = fromMs; ms < toMs; ms += 60_000) if (windowState(w, ms).open) open++;
    return open;
  };

  test('spring forward (29 March, 02:00 CET → 03:00 CEST): "Sun 02:00-05:00" opens at 03:00 CEST = 01:00 UTC and gives 2 hours', () => {
    const w = sunday('02:00', '05:00');
    assert.deepEqual(windowState(w, Date.UTC(2026, 2, 28, 12, 0)), {
      open: false,
      opensAtMs: Date.UTC(2026, 2, 29, 1, 0),
    });
    assert.deepEqual(windowState(w, Date.UTC(2026, 2, 29, 0, 59)), {
      open: false,
      opensAtMs: Date.UTC(2026, 2, 29, 1, 0),
    });
    assert.equal(windowState(w, Date.UTC(2026, 2, 29, 2, 59)).open, true);
    assert.equal(windowState(w, Date.UTC(2026, 2, 29, 3, 0)).open, false, 'closed at 05:00 CEST = 03:00 UTC');
    assert.equal(sampled(w, Date.UTC(2026, 2, 28, 22, 0), Date.UTC(2026, 2, 29, 6, 0)), 120);
  });

  test('spring forward: a window inside the skipped hour ("Sun 02:30-02:45") does not exist that day; it opens the next Sunday', () => {
    const w = sunday('02:30', '02:45');
    // 5 April is CEST: 02:30 local = 00:30 UTC.
    assert.deepEqual(windowState(w, Date.UTC(2026, 2, 28, 12, 0)), {
      open: false,
      opensAtMs: Date.UTC(2026, 3, 5, 0, 30),
    });
  });

  test('fall back (25 October, 03:00 CEST → 02:00 CET): "Sun 02:00-05:00" opens at 02:00 CEST = 00:00 UTC and gives 4 hours (02:00-03:00 twice)', () => {
    const w = sunday('02:00', '05:00');
    assert.deepEqual(windowState(w, Date.UTC(2026, 9, 24, 12, 0)), {
      open: false,
      opensAtMs: Date.UTC(2026, 9, 25, 0, 0),
    });
    assert.equal(windowState(w, Date.UTC(2026, 9, 25, 1, 30)).open, true, '02:30 CET, the second 02:30 of the night');
    assert.equal(windowState(w, Date.UTC(2026, 9, 25, 3, 59)).open, true, '04:59 CET');
    assert.equal(windowState(w, Date.UTC(2026, 9, 25, 4, 0)).open, false, 'closed at 05:00 CET = 04:00 UTC');
    assert.equal(sampled(w, Date.UTC(2026, 9, 24, 22, 0), Date.UTC(2026, 9, 25, 6, 0)), 240);
  });
});
