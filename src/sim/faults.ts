// Faults the simulated cluster can inject, switchable at start (`--faults`) and at run time
// (POST /sim/faults on the metrics port). The API server reads them on every request.

export interface Faults {
  /** Share (0..1) of API requests answered with an error instead of being served. */
  errorRate: number;
  /** Which errors those are; 429 carries `Retry-After`. */
  errorCodes: (500 | 503 | 429)[];
  /** Seconds sent in `Retry-After` with 429. */
  retryAfterSeconds: number;
  /** Added latency per request, in milliseconds. */
  latencyMs: number;
  /** Watch streams are cut after this many seconds (0 = never). */
  watchCutSeconds: number;
  /** A slow watch: every change reaches open watch streams this many milliseconds late, in order (0 = at once). */
  watchDelayMs: number;
}

export const NO_FAULTS: Readonly<Faults> = Object.freeze<Faults>({
  errorRate: 0,
  errorCodes: [500, 503, 429],
  retryAfterSeconds: 1,
  latencyMs: 0,
  watchCutSeconds: 0,
  watchDelayMs: 0,
});

/** Parses `errorRate=0.1,latencyMs=50,watchCutSeconds=5,watchDelayMs=2000,errorCodes=500|429` over the defaults. */
export function parseFaults(
  spec: string,
  base: Faults = { ...NO_FAULTS, errorCodes: [...NO_FAULTS.errorCodes] },
): Faults {
  const out: Faults = { ...base, errorCodes: [...base.errorCodes] };
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, value] = part.split('=', 2).map((s) => s.trim());
    if (!name || value === undefined) throw new Error(`fault "${part}": expected NAME=VALUE`);
    if (name === 'errorCodes') {
      const codes = value.split('|').map(Number);
      if (codes.some((c) => c !== 500 && c !== 503 && c !== 429))
        throw new Error(`fault errorCodes: expected 500, 503 or 429 joined by "|", found "${value}"`);
      out.errorCodes = codes as Faults['errorCodes'];
      continue;
    }
    if (!(name in NO_FAULTS))
      throw new Error(`unknown fault "${name}": expected one of ${Object.keys(NO_FAULTS).join(', ')}`);
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0 || (name === 'errorRate' && n > 1))
      throw new Error(
        `fault ${name}: expected a number${name === 'errorRate' ? ' from 0 to 1' : ' >= 0'}, found "${value}"`,
      );
    (out as unknown as Record<string, number>)[name] = n;
  }
  return out;
}
