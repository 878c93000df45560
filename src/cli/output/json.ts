// `-o json`: one JSON object per event per line. The common fields come first, in a fixed order
// (`time`, `plan`, `cluster` in a multi-cluster plan's, `event`, then `wave` and `pod` when the event has them), then the event's own
// fields as in src/rollout/events.ts. Pure.
//
// Written out key by key rather than by building a reordered copy for JSON.stringify: a
// 10,000-pod run prints about 100,000 lines, and such copies would be half the cost of printing them.
import type { RolloutEvent } from '../../rollout/events.js';

const LEADING = ['time', 'plan', 'cluster', 'event', 'wave', 'pod'] as const;
const LEADING_SET: ReadonlySet<string> = new Set(LEADING);

export function jsonLine(event: RolloutEvent): string {
  const fields = event as unknown as Record<string, unknown>;
  let out = '';
  const add = (key: string, value: unknown) => {
    // As JSON.stringify: a field that is undefined (or cannot be written) is left out.
    const text = JSON.stringify(value);
    if (text === undefined) return;
    out += `${out === '' ? '{' : ','}${JSON.stringify(key)}:${text}`;
  };
  for (const key of LEADING) if (key in fields) add(key, fields[key]);
  for (const key in fields) if (!LEADING_SET.has(key)) add(key, fields[key]);
  return out === '' ? '{}' : out + '}';
}
