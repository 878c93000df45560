// Small text helpers shared by the output modes: clock times, durations, counts, truncation.
// Pure.

/** `HH:MM:SS` of an ISO time, in the local time zone (what a person at the terminal reads). */
export function clockTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '--:--:--';
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** The one duration format for people (durationText.ts); re-exported for the output modes. */
export { formatDuration } from '../../durationText.js';

/** `1 pod`, `3 pods`. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** Cuts `s` to `width` characters, ending with `…` when cut. */
export function truncate(s: string, width: number): string {
  if (width <= 0) return '';
  if (s.length <= width) return s;
  return width === 1 ? '…' : s.slice(0, width - 1) + '…';
}

/** `a, b, c … 4 more`: at most `max` names of a list. */
export function nameList(names: readonly string[], max: number): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} … ${names.length - max} more`;
}

/** The part of `namespace/name` after the slash (the whole string if there is none). */
export function shortName(pod: string): string {
  const i = pod.indexOf('/');
  return i < 0 ? pod : pod.slice(i + 1);
}

/**
 * Lays out rows as columns: each column as wide as its widest cell; columns listed in
 * `rightAligned` (numbers) are padded on the left. Returns one string per row, no trailing spaces.
 */
export function columns(
  rows: readonly (readonly string[])[],
  rightAligned: ReadonlySet<number> = new Set(),
  gap = 2,
): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) =>
        rightAligned.has(i) ? cell.padStart(widths[i]!) : i === row.length - 1 ? cell : cell.padEnd(widths[i]!),
      )
      .join(' '.repeat(gap))
      .trimEnd(),
  );
}
