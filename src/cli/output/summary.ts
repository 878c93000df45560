// The table printed when a rollout ends: one row per wave, then the totals. Pure.
import type { WaveSummary } from '../../rollout/events.js';
import { columns, formatDuration } from './text.js';

const HEADER = ['wave', 'pods', 'upgraded', 'failed', 'vanished', 'duration'];
const NUMERIC = new Set([0, 1, 2, 3, 4, 5]);

/**
 * ```
 * wave  pods  upgraded  failed  vanished  duration
 *    1     1         1       0         0      2.1s
 *    2     5         5       0         0      3.0s
 * total    6         6       0         0      5.1s
 * ```
 * A wave that did not run shows `-` as its duration. No rows: an empty list.
 */
export function summaryTable(waves: readonly WaveSummary[], indent = ''): string[] {
  if (waves.length === 0) return [];
  const rows = [...waves]
    .sort((a, b) => a.wave - b.wave)
    .map((w) => [
      String(w.wave),
      String(w.pods),
      String(w.upgraded),
      String(w.failed),
      String(w.vanished),
      w.durationMs === undefined ? '-' : formatDuration(w.durationMs),
    ]);
  const sum = (f: (w: WaveSummary) => number) => String(waves.reduce((n, w) => n + f(w), 0));
  const ran = waves.filter((w) => w.durationMs !== undefined);
  const total = [
    'total',
    sum((w) => w.pods),
    sum((w) => w.upgraded),
    sum((w) => w.failed),
    sum((w) => w.vanished),
    ran.length === 0 ? '-' : formatDuration(ran.reduce((n, w) => n + (w.durationMs ?? 0), 0)),
  ];
  // Left-align the label column's header and total, right-align the wave numbers under it.
  const laid = columns([HEADER, ...rows, total], NUMERIC);
  const width = Math.max(HEADER[0]!.length, 'total'.length);
  laid[0] = 'wave'.padEnd(width) + laid[0]!.slice(width);
  laid[laid.length - 1] = 'total'.padEnd(width) + laid[laid.length - 1]!.slice(width);
  return laid.map((l) => indent + l);
}
