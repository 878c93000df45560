// When and how long to wait before repeating a failed API request. The decision is pure
// (error, attempt, elapsed time, policy, a random number) → delay or give up; `withRetry` is the
// small loop around it, with sleep, clock and randomness injected so tests need no real time.
//
// What is retried: 429 (after at least its Retry-After), 500/502/503/504, and requests that got
// no response at all (connection refused or reset, socket hang up, timeout). What is never
// retried: everything else — above all 409 (the caller must re-read and decide again, a blind
// retry would overwrite someone's change or repeat a step), 404, 410 and 422.
//
// A write whose connection dropped may have been applied all the same. Repeating it is safe here
// because every write kwave makes is either guarded or idempotent:
// - the image patch carries `metadata.resourceVersion`: if the first attempt was applied, the
//   repeat answers 409 and the caller re-reads and sees its own patch;
// - the in-place flow's close-gate and open-gate patches carry the resourceVersion they were
//   decided on: a repeat of one that was applied answers 409, and the flow re-reads; the
//   unguarded condition patches (a failed pod's re-close, the reopening after a refused image
//   patch, `kwave adopt`'s patchPodCondition) set one condition by type, and applying them twice
//   leaves the same result;
// - ConfigMap/Lease updates carry resourceVersion (409 when already applied); a repeated create
//   answers 409 AlreadyExists, which callers treat as "re-read";
// - a repeated Event create at worst records the event twice.
import type { Sleep } from '../sleep.js';
import { CONNECTION_CODES, type KubeError } from './kubeError.js';

export interface RetryPolicy {
  /** First back-off, before jitter. */
  baseMs: number;
  /** Growth per attempt. */
  factor: number;
  /** Largest back-off, before jitter. */
  capMs: number;
  /** Attempts in all, the first one included. */
  maxAttempts: number;
  /** Give up once this much time has passed since the first attempt (or would have, after the next wait). */
  deadlineMs: number;
}

/**
 * About a minute of retries (at most 20 attempts, the later ones 2.5-5 s apart): enough to ride out a
 * kube-apiserver restart (10-15 s on the test control plane, up to a minute on a real one) or a
 * stalled etcd, mid-wave or at start, instead of failing the run and leaving a pod drained.
 */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  baseMs: 200,
  factor: 2,
  capMs: 5_000,
  maxAttempts: 20,
  deadlineMs: 60_000,
});

const RETRYABLE_HTTP = new Set([429, 500, 502, 503, 504]);

/** Reasons (for code 0) that mean "no usable response": worth another try. */
const RETRYABLE_CONNECTION: ReadonlySet<string> = new Set([...CONNECTION_CODES, 'ConnectionError', 'Timeout']);

/** True for errors that a later identical request may not meet: overload, server faults, dropped connections. */
export function isRetryable(err: Pick<KubeError, 'code' | 'reason'>): boolean {
  if (err.code === 0) return RETRYABLE_CONNECTION.has(err.reason);
  return RETRYABLE_HTTP.has(err.code);
}

/**
 * The wait after the `attempt`-th failure (1-based): exponential, capped, with "equal jitter" —
 * half of it fixed, half random — so many clients hit by the same fault spread out but none
 * retries at once. E.g. base 200, factor 2, cap 5000: attempt 1 → 100..200 ms, 2 → 200..400,
 * 3 → 400..800, 6 and later → 2500..5000.
 */
export function backoffDelay(
  attempt: number,
  policy: Pick<RetryPolicy, 'baseMs' | 'factor' | 'capMs'>,
  random: () => number,
): number {
  const exp = Math.min(policy.capMs, policy.baseMs * policy.factor ** Math.max(0, attempt - 1));
  const r = Math.min(1, Math.max(0, random()));
  return Math.round(exp / 2 + (exp / 2) * r);
}

/**
 * How long to wait before attempt `attempt + 1`, or undefined to give up and surface the error.
 * A Retry-After (sent with 429, sometimes 503) is a floor: we wait at least as long as the server
 * asked. Gives up when attempts run out or the wait would cross the deadline.
 */
export function retryDelay(
  err: Pick<KubeError, 'code' | 'reason' | 'retryAfterSeconds'>,
  attempt: number,
  elapsedMs: number,
  policy: RetryPolicy,
  random: () => number,
): number | undefined {
  if (!isRetryable(err)) return undefined;
  if (attempt >= policy.maxAttempts) return undefined;
  let delay = backoffDelay(attempt, policy, random);
  if (err.retryAfterSeconds !== undefined && (err.code === 429 || err.code === 503)) {
    delay = Math.max(delay, err.retryAfterSeconds * 1000);
  }
  if (elapsedMs + delay > policy.deadlineMs) return undefined;
  return delay;
}

export interface RetryDeps {
  sleep: Sleep;
  random: () => number;
  now: () => number;
}

export interface RetryOptions {
  policy?: RetryPolicy;
  signal?: AbortSignal;
  /** Called before each wait, e.g. for logging. */
  onRetry?: (err: KubeError, attempt: number, delayMs: number) => void;
}

/**
 * Runs `attempt(n)` (n = 1, 2, …) until it succeeds, fails with an error that is not worth
 * repeating, or the policy gives up; then throws the last error. `toError` turns whatever the
 * attempt threw into a KubeError; anything it cannot classify is not retried.
 */
export async function withRetry<T>(
  attempt: (n: number) => Promise<T>,
  toError: (thrown: unknown) => KubeError,
  deps: RetryDeps,
  options: RetryOptions = {},
): Promise<T> {
  const policy = options.policy ?? DEFAULT_RETRY_POLICY;
  const started = deps.now();
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (thrown) {
      const err = toError(thrown);
      const delay = options.signal?.aborted ? undefined : retryDelay(err, n, deps.now() - started, policy, deps.random);
      if (delay === undefined) throw err;
      options.onRetry?.(err, n, delay);
      await deps.sleep(delay, options.signal);
      if (options.signal?.aborted) throw err;
    }
  }
}
