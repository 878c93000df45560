// How measured values read in messages: short, and stable enough to grep for.

/** 0.08333 → `0.0833`, 1234.5678 → `1234.568`, 12 → `12`, NaN → `NaN`, Infinity → `+Inf`. */
export function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (Number.isInteger(v)) return String(v);
  // Three significant digits below 1 keep small error rates readable; three decimals above.
  const rounded = Math.abs(v) >= 1 ? Math.round(v * 1000) / 1000 : Number(v.toPrecision(3));
  return String(rounded);
}

const MAX_LISTED = 5;

/** A vector's values as `[0.1, 0.2]`, cut after five: `[0.1, 0.2, 0.3, 0.4, 0.5, … 12 values]`. */
export function formatValue(v: number | number[] | null): string {
  if (v === null) return 'no value';
  if (typeof v === 'number') return formatNumber(v);
  const shown = v.slice(0, MAX_LISTED).map(formatNumber);
  if (v.length > MAX_LISTED) shown.push(`… ${v.length} values`);
  return `[${shown.join(', ')}]`;
}
