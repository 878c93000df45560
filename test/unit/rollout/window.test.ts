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
