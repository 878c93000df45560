// Durations as plans write them: "500ms", "30s", "5m", "1h", "1h30m" (Go's units, no days).

const PART = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/y;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The longest duration a plan may ask for: 30 days is far beyond any sane pause or timeout. */
export const MAX_DURATION_MS = 30 * 24 * 3_600_000;

/** Milliseconds, or undefined when `text` is not a duration. Fractions of a millisecond round. */
export function parseDuration(text: string): number | undefined {
  if (text === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const m = PART.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

/** 90_000 → "1m30s", 1500 → "1s500ms": a duration as a plan writes it (parseDuration reads it back). */
export function formatPlanDuration(ms: number): string {
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0) parts.push(`${rest}ms`);
  return parts.join('');
}
