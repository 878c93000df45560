// What a Cluster is made with (clock, retries, time limits, rate limit, counter) and who may
// follow the pods its requests return (the pod cache).
import type { V1Pod } from '@kubernetes/client-node';
import { realSleep } from '../sleep.js';
import type { RateLimit } from './rateLimit.js';
import type { RequestCounter } from './requestCounter.js';
import type { RetryDeps, RetryPolicy } from './retry.js';

export interface ClusterDeps extends RetryDeps {
  /** Wall clock for timestamps written into objects (conditions, events). */
  date: () => Date;
}

export const realClusterDeps: ClusterDeps = {
  sleep: realSleep,
  random: Math.random,
  now: () => Date.now(),
  date: () => new Date(),
};

export interface ClusterOptions {
  deps?: Partial<ClusterDeps>;
  retry?: RetryPolicy;
  /** Abort a single request (not a watch) after this long; it then counts as a dropped connection. Default 30 s. */
  requestTimeoutMs?: number;
  /** Share keep-alive connection pools between requests (else a new TLS connection per request). Default true. */
  keepAlive?: boolean;
  /** Shared request counter (e.g. one per process for metrics); default a new one. */
  counter?: RequestCounter;
  /** The namespace the context names; used by commands when no namespace is given. */
  defaultNamespace?: string;
  /**
   * Client-side QPS and burst over every request (each attempt of a retry, and each watch opened);
   * default DEFAULT_RATE_LIMIT.
   */
  rateLimit?: RateLimit;
}

/** Who keeps pods current from the answers to kwave's own requests (the pod cache). */
export interface PodObserver {
  /** A pod a request of this Cluster returned. */
  observe(pod: V1Pod): void;
  /**
   * The pod it holds at this version or a later one, if any: an answer of that version is then
   * not parsed, the held pod is the answer.
   */
  held(namespace: string, name: string, resourceVersion: string): V1Pod | undefined;
}
