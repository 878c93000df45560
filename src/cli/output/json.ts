// `-o json`: one JSON object per event per line. The common fields come first, in a fixed order
// (`time`, `plan`, `cluster` in a multi-cluster plan's, `event`, then `wave` and `pod` when the event has them), then the event's own
// fields as in src/rollout/events.ts. Pure.
import type { RolloutEvent } from '../../rollout/events.js';

export function jsonLine(event: RolloutEvent): string {
  const { time, plan, cluster, event: name, ...rest } = event;
  const ordered: Record<string, unknown> = cluster === undefined ? { time, plan, event: name } : { time, plan, cluster, event: name };
  if ('wave' in rest) ordered.wave = rest.wave;
  if ('pod' in rest) ordered.pod = rest.pod;
  for (const [k, v] of Object.entries(rest)) if (!(k in ordered)) ordered[k] = v;
  return JSON.stringify(ordered);
}
