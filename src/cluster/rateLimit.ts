// Client-side rate limit of API requests, as client-go's (`QPS` and `Burst` of rest.Config): a
// token bucket that holds at most `burst` tokens and gains `qps` a second; each request takes
// one. A request that finds the bucket empty reserves the next token and waits for it, so waiting
// requests go in arrival order and no queue is kept: the bucket's level may go below zero, and
// that debt is what later callers wait behind. The arithmetic is pure over an injected clock
// (`reserve`); `take` adds the sleep.
//
// Worked example, qps 100, burst 200: 500 requests at once: 200 go at once, the 201st waits
// 10 ms, the 500th 3 s; after 2 s idle the bucket is full again.
import type { Sleep } from '../sleep.js';

export interface RateLimit {
  /** Tokens gained per second; 0 means no limit. */
  qps: number;
  /** Most tokens held, i.e. requests that may go at once after a quiet spell (at least 1). */
  burst: number;
}

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number,
  ) {
    if (!(limit.qps >= 0) || !Number.isFinite(limit.qps))
      throw new RangeError(`qps must be a number ≥ 0, got ${limit.qps}`);
    if (limit.qps > 0 && !(Number.isInteger(limit.burst) && limit.burst >= 1))
      throw new RangeError(`burst must be a whole number ≥ 1, got ${limit.burst}`);
    this.tokens = limit.burst;
    this.last = now();
  }

  /** Takes a token, now or in the future: returns how many milliseconds to wait before sending (0 = now). */
  reserve(): number {
    if (this.limit.qps === 0) return 0;
    const t = this.now();
    this.tokens = Math.min(this.limit.burst, this.tokens + ((t - this.last) * this.limit.qps) / 1000);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.limit.qps;
  }

  /** Waits for a token. */
  async take(sleep: Sleep, signal?: AbortSignal): Promise<void> {
    const ms = this.reserve();
    if (ms > 0) await sleep(ms, signal);
  }
}

/**
 * kwave's default: high enough that the benchmark's largest wave (concurrency 500 at the
 * simulator's 0.5 s a pod: 3 writes a pod, about 3,000 a second, in bursts of up to 1,000 when a
 * round starts) does not wait on it,
 * low enough that a runaway loop cannot send more than this to a real API server. See
 * docs/operating.md, "API request rate".
 */
export const DEFAULT_RATE_LIMIT: Readonly<RateLimit> = Object.freeze({ qps: 5000, burst: 10000 });

/** Where each figure of the limit may come from, strongest first: the flags, the plan, the default. */
export interface RateLimitSources {
  flags?: { qps?: number; burst?: number };
  plan?: { qps?: number; burst?: number };
}

/** The limit in force: per figure, the flag over the plan over the default. Pure. */
export function chooseRateLimit(sources: RateLimitSources, defaults: RateLimit = DEFAULT_RATE_LIMIT): RateLimit {
  return {
    qps: sources.flags?.qps ?? sources.plan?.qps ?? defaults.qps,
    burst: sources.flags?.burst ?? sources.plan?.burst ?? defaults.burst,
  };
}
