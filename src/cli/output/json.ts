// `-o json`: one JSON object per event per line. The common fields come first, in a fixed order
// (`time`, `plan`, `cluster` in a multi-cluster plan's, `event`, then `wave` and `pod` when the event has them), then the event's own
// fields as in src/rollout/events.ts. Pure.
//
// A 10,000-pod run prints about 100,000 lines. Most events are made with their fields in that
// order already (rollout/runState.ts emit), and then they are written by one JSON.stringify; the
// others key by key, rather than through a reordered copy (half the cost of printing them).
import type { RolloutEvent } from '../../rollout/events.js';

const LEADING = ['time', 'plan', 'cluster', 'event', 'wave', 'pod'] as const;
const LEADING_INDEX: ReadonlyMap<string, number> = new Map(LEADING.map((k, i) => [k, i]));

export function jsonLine(event: RolloutEvent): string {
  const fields = event as unknown as Record<string, unknown>;
  return inOrder(fields) ? JSON.stringify(fields) : reordered(fields);
}

/** Whether the object's keys come as the line has them: the leading ones first, in their order. */
function inOrder(fields: Record<string, unknown>): boolean {
  let next = 0;
  let pastLeading = false;
  for (const key in fields) {
    const at = LEADING_INDEX.get(key);
    if (at === undefined) pastLeading = true;
    else if (pastLeading || at < next) return false;
    else next = at + 1;
  }
  return true;
}

function reordered(fields: Record<string, unknown>): string {
  let out = '';
  const add = (key: string, value: unknown) => {
    // As JSON.stringify: a field that is undefined (or cannot be written) is left out.
    const text = JSON.stringify(value);
    if (text === undefined) return;
    out += `${out === '' ? '{' : ','}${JSON.stringify(key)}:${text}`;
  };
  for (const key of LEADING) if (key in fields) add(key, fields[key]);
  for (const key in fields) if (!LEADING_INDEX.has(key)) add(key, fields[key]);
  return out === '' ? '{}' : out + '}';
}
