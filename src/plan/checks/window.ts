// spec.window: a time zone this Node.js knows, and windows that parse.
import type { DeepPartial, RawSpec } from '../raw.js';
import { WINDOW_EXPECTED, isKnownTimezone, parseWindowEntry } from '../window.js';
import type { CheckContext } from './context.js';

export function checkWindow(ctx: CheckContext, window: DeepPartial<RawSpec['window']> | undefined): void {
  const at = ['spec', 'window'];
  if (typeof window !== 'object' || window === null || !ctx.accepted(at)) return;
  const tz = window.timezone;
  if (typeof tz === 'string' && ctx.accepted([...at, 'timezone']) && !isKnownTimezone(tz)) {
    ctx.add(
      [...at, 'timezone'],
      `expected an IANA time zone like "Europe/Berlin" or "UTC", found ${JSON.stringify(tz)}`,
    );
  }
  if (!ctx.accepted([...at, 'allow'])) return;
  (window.allow ?? []).forEach((entry, i) => {
    const path = [...at, 'allow', i];
    if (typeof entry !== 'string' || !ctx.accepted(path)) return;
    const parsed = parseWindowEntry(entry);
    if (!parsed.ok) ctx.add(path, `expected ${WINDOW_EXPECTED}, found ${JSON.stringify(entry)}: ${parsed.reason}`);
  });
}
