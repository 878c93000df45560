// Reads an answer of Prometheus' instant-query API (`GET /api/v1/query`) into the values a
// gate condition sees. Pure: the HTTP call lives in prometheus.ts.

/**
 * What a query gave.
 * - `result`: the number for a scalar or a one-sample vector (so `result < 0.01` reads
 *   naturally), else the list of the vector's sample values.
 * - `results`: always the list of values (a scalar gives a one-element list), for conditions
 *   that must hold for any vector size, e.g. `results.all(x, x < 0.01)`.
 */
export type QueryValue = { kind: 'value'; result: number | number[]; results: number[] } | { kind: 'empty' };

export type ReadResult = { ok: true; value: QueryValue } | { ok: false; error: string };

/** Prometheus writes sample values as strings, including `NaN`, `+Inf` and `-Inf`. */
export function parseSampleValue(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const n = Number(text);
  return text.trim() !== '' && !Number.isNaN(n) ? n : undefined;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value of a `[unixTime, "value"]` pair. */
function pairValue(pair: unknown): number | undefined {
  return Array.isArray(pair) && pair.length === 2 ? parseSampleValue(pair[1]) : undefined;
}

/** Interprets the status code and body of an instant query; every problem comes back as an error string. */
export function readQueryResponse(status: number, body: string): ReadResult {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    const start = body.slice(0, 80).replace(/\s+/g, ' ').trim();
    return { ok: false, error: `HTTP ${status}: answer is not JSON${start ? ` ("${start}")` : ''}` };
  }
  if (!isObject(json)) return { ok: false, error: `HTTP ${status}: answer is not a JSON object` };
  if (json.status !== 'success' || status < 200 || status > 299) {
    const what = [json.errorType, json.error].filter((s) => typeof s === 'string' && s !== '').join(': ');
    return { ok: false, error: `HTTP ${status}${what ? `: ${what}` : ' without status "success"'}` };
  }
  const data = json.data;
  if (!isObject(data)) return { ok: false, error: 'answer has no "data" object' };

  switch (data.resultType) {
    case 'scalar': {
      const v = pairValue(data.result);
      if (v === undefined) return { ok: false, error: 'scalar result is not a [time, "value"] pair' };
      return { ok: true, value: { kind: 'value', result: v, results: [v] } };
    }
    case 'vector': {
      if (!Array.isArray(data.result)) return { ok: false, error: 'vector result is not a list' };
      const values: number[] = [];
      for (const sample of data.result) {
        const v = isObject(sample) ? pairValue(sample.value) : undefined;
        if (v === undefined) return { ok: false, error: 'vector sample without a [time, "value"] pair' };
        values.push(v);
      }
      if (values.length === 0) return { ok: true, value: { kind: 'empty' } };
      return { ok: true, value: { kind: 'value', result: values.length === 1 ? values[0]! : values, results: values } };
    }
    case 'matrix':
      return {
        ok: false,
        error:
          'query returned a range vector; a gate needs an instant vector or a scalar (wrap it in rate(), avg_over_time(), …)',
      };
    case 'string':
      return { ok: false, error: 'query returned a string; a gate needs an instant vector or a scalar' };
    default:
      return { ok: false, error: `unknown resultType ${JSON.stringify(data.resultType)}` };
  }
}
