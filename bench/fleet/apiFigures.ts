// The API server as kwave saw it during a benchmark run: request rate and latency, read from
// kwave's own metrics (kwave_kube_requests_total, kwave_kube_request_duration_seconds) in one
// scrape at the end of the run. The scrape is taken as soon as `rollout-end` is in kwave's
// stdout file, which also ends kwave's --metrics-linger at once. Parsing is pure.
import { open } from 'node:fs/promises';
import { createServer } from 'node:net';

/** Latency of one kind of request (`patch pods/status`), in milliseconds. */
export interface RequestLatency {
  count: number;
  meanMs: number;
  /** Estimated from the histogram's buckets, as PromQL's histogram_quantile does. */
  p50Ms: number;
  p99Ms: number;
}

export interface ApiFigures {
  /** Every request kwave made, watches included. */
  requests: number;
  /** Requests per second over the rollout's own duration. */
  perSecond: number;
  byRequest: Record<string, RequestLatency>;
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The `q` quantile of cumulative buckets (upper bound → count), interpolated within a bucket. */
export function bucketQuantile(q: number, buckets: [number, number][]): number {
  const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
  const total = sorted[sorted.length - 1]?.[1] ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, count] of sorted) {
    if (count >= rank) {
      // The +Inf bucket has no upper edge: the highest finite one is the answer, as in PromQL.
      if (!Number.isFinite(le)) return lower;
      return lower + ((le - lower) * (rank - below)) / Math.max(1, count - below);
    }
    lower = le;
    below = count;
  }
  return lower;
}

/** Request rate and latency by `verb resource` from kwave's exposition, over `seconds` of rollout. */
export function apiFigures(exposition: string, seconds: number): ApiFigures {
  let requests = 0;
  const buckets = new Map<string, [number, number][]>();
  const sums = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const s of parseExposition(exposition)) {
    const key = `${s.labels.verb} ${s.labels.resource}`;
    if (s.name === 'kwave_kube_requests_total') requests += s.value;
    else if (s.name === 'kwave_kube_request_duration_seconds_bucket') {
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      buckets.set(key, [...(buckets.get(key) ?? []), [le, s.value]]);
    } else if (s.name === 'kwave_kube_request_duration_seconds_sum') sums.set(key, (sums.get(key) ?? 0) + s.value);
    else if (s.name === 'kwave_kube_request_duration_seconds_count') counts.set(key, (counts.get(key) ?? 0) + s.value);
  }
  const byRequest: Record<string, RequestLatency> = {};
  for (const [key, count] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    if (count === 0) continue;
    const b = buckets.get(key) ?? [];
    byRequest[key] = {
      count,
      meanMs: ((sums.get(key) ?? 0) / count) * 1000,
      p50Ms: bucketQuantile(0.5, b) * 1000,
      p99Ms: bucketQuantile(0.99, b) * 1000,
    };
  }
  return { requests, perSecond: seconds > 0 ? requests / seconds : NaN, byRequest };
}

/** A TCP port free right now on 127.0.0.1 (for kwave's --metrics-address). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Follows `file` (kwave's stdout, as it is written) until a `rollout-end` line is in it, then
 * scrapes `metricsUrl` once; resolves with the exposition, or undefined if kwave exited first
 * (`exited` aborted) or the scrape failed. Reads only what was appended since the last look.
 */
export async function scrapeAtEnd(
  file: string,
  metricsUrl: string,
  exited: AbortSignal,
  pollMs = 100,
): Promise<string | undefined> {
  const handle = await open(file, 'r');
  try {
    let offset = 0;
    let tail = '';
    const chunk = Buffer.alloc(1 << 20);
    while (!exited.aborted) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset);
      if (bytesRead > 0) {
        offset += bytesRead;
        const text = tail + chunk.toString('utf8', 0, bytesRead);
        if (text.includes('"event":"rollout-end"')) {
          const res = await fetch(metricsUrl).catch(() => undefined);
          return res?.ok ? await res.text() : undefined;
        }
        tail = text.slice(-64); // an event split across two reads is still found
        continue;
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
    return undefined;
  } finally {
    await handle.close();
  }
}
