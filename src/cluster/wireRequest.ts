// What one request to the API server is, as wire.ts sends it: method, path, query, body, and
// the hooks that let a caller skip work on the answer (its head, a version it already holds).

export interface WireRequest {
  method: 'GET' | 'PATCH' | 'POST' | 'PUT' | 'DELETE';
  /** Path under the server URL, e.g. `/api/v1/namespaces/default/pods`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /**
   * Given the first bytes of a 2xx answer's body as soon as they arrive (once per attempt), before
   * the rest is read.
   */
  onHead?: (head: string) => void;
  /** An object the caller already holds at the answer's version: returned instead of parsing the answer again. */
  reuse?: (resourceVersion: string) => unknown;
  /** A watch's: a line whose object's version this says is known is handed on as a BOOKMARK of it, unparsed. */
  known?: (resourceVersion: string) => boolean;
  /** This request's time limit, exact, instead of the client's (coarse: undici's timers tick about once a second). */
  timeoutMs?: number;
}

/** `?a=1&b=x` from the defined entries, in the given order. Pure. */
export function queryString(query: WireRequest['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}
