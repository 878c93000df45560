// Is a maintenance window open now, and if not, when does it open? Pure. Local time in the
// window's timezone comes from Intl, so daylight-saving shifts are the platform's own.
import type { Window } from '../plan/types.js';

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timezone, f);
  }
  return f;
}

/** Weekday (0 = Sunday) and minute of the day at `ms` in `timezone`. */
export function localTime(ms: number, timezone: string): { day: number; minute: number } {
  let day = 0;
  let hour = 0;
  let minute = 0;
  for (const p of formatter(timezone).formatToParts(ms)) {
    if (p.type === 'weekday') day = WEEKDAYS[p.value] ?? 0;
    else if (p.type === 'hour') hour = Number(p.value);
    else if (p.type === 'minute') minute = Number(p.value);
  }
  return { day, minute: hour * 60 + minute };
}

/** Whether any entry of the window covers local time `t`. Entries ending before they start run into the next day. */
export function isOpenAt(window: Window, t: { day: number; minute: number }): boolean {
  const yesterday = (t.day + 6) % 7;
  return window.allow.some((e) => {
    const days = e.days.length > 0 ? e.days : [0, 1, 2, 3, 4, 5, 6];
    if (e.endMinute > e.startMinute) return days.includes(t.day) && t.minute >= e.startMinute && t.minute < e.endMinute;
    return (days.includes(t.day) && t.minute >= e.startMinute) || (days.includes(yesterday) && t.minute < e.endMinute);
  });
}

export type WindowState = { open: true } | { open: false; opensAtMs: number } | { open: false; opensAtMs: undefined };

/**
 * The window's state at `nowMs`. When closed, the next opening is found by stepping through
 * whole minutes (at most a week and a day: 11,520 steps, a few milliseconds).
 */
export function windowState(window: Window, nowMs: number): WindowState {
  if (isOpenAt(window, localTime(nowMs, window.timezone))) return { open: true };
  const start = Math.floor(nowMs / 60_000) * 60_000 + 60_000;
  for (let ms = start; ms <= nowMs + 8 * 24 * 3_600_000; ms += 60_000) {
    if (isOpenAt(window, localTime(ms, window.timezone))) return { open: false, opensAtMs: ms };
  }
  return { open: false, opensAtMs: undefined };
}
