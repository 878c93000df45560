// Maintenance windows: "Mon-Fri 02:00-05:00", "Sat,Sun 00:00-24:00", "22:00-04:00".
// Days: names (Mon … Sun), ranges (a range may wrap: "Fri-Mon" is Fri, Sat, Sun, Mon) and lists;
// no days means every day. Times are HH:MM on a 24-hour clock; "24:00" may end a window. An end
// before the start means the window runs across midnight into the next day: "Fri 22:00-04:00" is
// open from Friday 22:00 to Saturday 04:00. Start and end may not be equal.
import { quoted } from './describe.js';
import type { Window } from './types.js';

export type WindowEntry = Window['allow'][number];

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const ENTRY = /^(?:(\S+)\s+)?(\d{2}):(\d{2})-(\d{2}):(\d{2})$/;

export const WINDOW_EXPECTED = 'a window like "Mon-Fri 02:00-05:00" (days, then HH:MM-HH:MM on a 24-hour clock)';

function dayIndex(name: string): number | undefined {
  const i = DAY_NAMES.indexOf(name.toLowerCase());
  return i >= 0 ? i : undefined;
}

function parseDays(text: string): number[] | string {
  const days = new Set<number>();
  for (const item of text.split(',')) {
    const [from, to, extra] = item.split('-');
    if (extra !== undefined) return `the day range ${quoted(item)} has more than one "-"`;
    const a = dayIndex(from ?? '');
    if (a === undefined) return `${quoted(from ?? '')} is not a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)`;
    if (to === undefined) {
      days.add(a);
      continue;
    }
    const b = dayIndex(to);
    if (b === undefined) return `${quoted(to)} is not a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)`;
    for (let d = a; ; d = (d + 1) % 7) {
      days.add(d);
      if (d === b) break;
    }
  }
  return [...days].sort((x, y) => x - y);
}

function minutes(hh: string, mm: string, mayBeEnd: boolean): number | undefined {
  const h = Number(hh);
  const m = Number(mm);
  if (m > 59) return undefined;
  if (h === 24 && m === 0 && mayBeEnd) return 1440;
  return h <= 23 ? h * 60 + m : undefined;
}

/** One `allow` entry → days and minutes, or the reason it is not one. */
export function parseWindowEntry(text: string): { ok: true; entry: WindowEntry } | { ok: false; reason: string } {
  const m = ENTRY.exec(text.trim());
  if (!m) return { ok: false, reason: 'it does not have the form "[DAYS] HH:MM-HH:MM"' };
  const days = m[1] === undefined ? [0, 1, 2, 3, 4, 5, 6] : parseDays(m[1]);
  if (typeof days === 'string') return { ok: false, reason: days };
  const start = minutes(m[2] as string, m[3] as string, false);
  const end = minutes(m[4] as string, m[5] as string, true);
  if (start === undefined) return { ok: false, reason: `${m[2]}:${m[3]} is not a time of day` };
  if (end === undefined) return { ok: false, reason: `${m[4]}:${m[5]} is not a time of day` };
  if (start === end) return { ok: false, reason: 'it starts and ends at the same time' };
  return { ok: true, entry: { days, startMinute: start, endMinute: end, text } };
}

/** True when `timezone` is an IANA zone this Node.js knows (e.g. "Europe/Berlin", "UTC"). */
export function isKnownTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}
