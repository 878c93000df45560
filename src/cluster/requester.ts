// How one request to the API server goes out, for Cluster: each attempt waits its turn at the
// client-side rate limit (TokenBucket), is counted (RequestCounter), times out, and is retried when
// that is safe (retry.ts); it fails only with KubeError. Every request and watch goes over plain
// HTTPS (wire.ts).
//
// Two lanes. The lease and the rollout record (`lane: 'control'`) have a token bucket and a
// connection pool of their own, and are never queued: a 10,000-pod wave may put the pod lane's
// bucket seconds in debt, and the lease renewal must never wait behind that, or the run loses its
// lease because it is busy (client-go gives leader election a client of its own for the same
// reason). The pod lane also keeps at most MAX_POD_REQUESTS_IN_FLIGHT requests at the server at
// once (the rest wait here, in order): a slow server answers in arrival order, so a renewal sent
// while 500 pod patches are queued there would wait behind all of them; here it waits behind at
// most that many. The control lane is small by construction: a renewal every few seconds, a
// record write at most once a second. Its requests may carry a time limit (`withinMs`): the
// lease is worth renewing only until its renew deadline, so no attempt or retry outlives that.
import pLimit, { type LimitFunction } from 'p-limit';
import type { KubeConfig } from '@kubernetes/client-node';
import { toKubeError, withTarget, type KubeError } from './kubeError.js';
import { TokenBucket, type RateLimit } from './rateLimit.js';
import type { KubeResource, KubeVerb, RequestCounter } from './requestCounter.js';
import type { WatchHandle, WatchPodsQuery } from './requestShapes.js';
import { withRetry, type RetryDeps, type RetryPolicy } from './retry.js';
import { WireClient } from './wire.js';
import type { WireRequest } from './wireRequest.js';

export interface RequesterOptions {
  deps: RetryDeps;
  retryPolicy: RetryPolicy;
  requestTimeoutMs: number;
  keepAlive: boolean;
  counter: RequestCounter;
  rateLimit: RateLimit;
  /** Pod-lane requests at the server at once; default MAX_POD_REQUESTS_IN_FLIGHT. */
  maxPodRequestsInFlight?: number;
}

/**
 * Enough for the benchmark's widest wave (3,000 writes a second) at 40 ms a request; few enough
 * that a renewal queued at a slow server behind them is answered well inside its deadline.
 */
const MAX_POD_REQUESTS_IN_FLIGHT = 128;

/** What one request does, for its count and, when refused, the message naming the permission. */
export interface CountedRequest {
  verb: KubeVerb;
  resource: KubeResource;
  /** Undefined for cluster-scoped resources. */
  namespace?: string;
}

/** Which lane a request takes: `pods` (every request but these) or `control` (the lease and the rollout record). */
export type Lane = 'pods' | 'control';

export interface LaneOptions {
  lane?: Lane;
  /** Give up (attempts and retries) once this long has passed since the call: the answer is worth nothing later. */
  withinMs?: number;
}

/** Runs a request when its turn comes: a lane's slots (p-limit), or at once. */
type Queue = <R>(send: () => Promise<R>) => Promise<R>;
const unqueued: Queue = (send) => send();

export class Requester {
  private readonly closing = new AbortController();
  private readonly bucket: TokenBucket;
  /** The control lane's own bucket, of the same size: its requests never wait behind pod traffic's debt. */
  private readonly controlBucket: TokenBucket;
  /** One connection pool per lane. */
  private readonly wireClients: Record<Lane, WireClient>;
  /** The pod lane's requests at the server (FIFO beyond the limit). */
  private readonly podSlots: LimitFunction;

  constructor(
    kubeConfig: KubeConfig,
    private readonly options: RequesterOptions,
  ) {
    this.bucket = new TokenBucket(options.rateLimit, options.deps.now);
    this.controlBucket = new TokenBucket(options.rateLimit, options.deps.now);
    const podSlots = options.maxPodRequestsInFlight ?? MAX_POD_REQUESTS_IN_FLIGHT;
    this.podSlots = pLimit(podSlots);
    const wireOptions = { timeoutMs: options.requestTimeoutMs, keepAlive: options.keepAlive };
    this.wireClients = {
      pods: new WireClient(kubeConfig, { ...wireOptions, connections: podSlots }),
      control: new WireClient(kubeConfig, wireOptions),
    };
  }

  /** The client-side rate limit in force. */
  get rateLimit(): RateLimit {
    return this.bucket.limit;
  }

  /**
   * One attempt, once `queue` lets it go (a pod-lane slot): counted by its answer's status or its
   * failure, which becomes a KubeError naming the target, with the time from its send to then.
   */
  private counted<T>(
    target: CountedRequest,
    queue: Queue,
    send: () => Promise<T>,
    statusOf: (answer: T) => number,
  ): Promise<T> {
    const { counter } = this.options;
    return queue(async () => {
      const sentAt = performance.now();
      const seconds = () => (performance.now() - sentAt) / 1000;
      try {
        const answer = await send();
        counter.record(target.verb, target.resource, statusOf(answer), seconds());
        return answer;
      } catch (thrown) {
        const err = withTarget(toKubeError(thrown), target);
        counter.record(target.verb, target.resource, err.code || 'error', seconds());
        throw err;
      }
    });
  }

  /** Stops retries in progress and destroys the requests under way and the pooled connections. */
  close(): void {
    this.closing.abort();
    for (const client of Object.values(this.wireClients)) client.close();
  }

  /**
   * A request over plain HTTPS (wire.ts) in its lane: counted per attempt, rate-limited, retried
   * per policy; with `withinMs`, no attempt or retry outlives that time limit.
   */
  wire(target: CountedRequest, req: WireRequest, options: LaneOptions = {}): Promise<unknown> {
    const { deps, requestTimeoutMs } = this.options;
    const control = options.lane === 'control';
    const bucket = control ? this.controlBucket : this.bucket;
    const client = this.wireClients[control ? 'control' : 'pods'];
    const { withinMs } = options;
    const started = withinMs === undefined ? 0 : deps.now();
    const policy =
      withinMs === undefined
        ? this.options.retryPolicy
        : { ...this.options.retryPolicy, deadlineMs: Math.min(this.options.retryPolicy.deadlineMs, withinMs) };
    return withRetry(
      async () => {
        // Each attempt waits its turn: a retry is another request to the server.
        await bucket.take(deps.sleep, this.closing.signal);
        // The time limit starts when the request is sent, not while it waits for a pod-lane slot.
        const send = () =>
          client.send(
            withinMs === undefined
              ? req
              : { ...req, timeoutMs: Math.max(1, Math.min(requestTimeoutMs, withinMs - (deps.now() - started))) },
          );
        // Once closed, send() fails at once: queued requests drain without reaching the server.
        return this.counted(target, control ? unqueued : this.podSlots, send, () => 200);
      },
      toKubeError,
      deps,
      { policy, signal: this.closing.signal },
    );
  }

  /**
   * One watch stream of `path`, counted as one `watch RESOURCE` request (code 200 once the stream
   * opened, else the HTTP status or 'error'). `onDone` is called exactly once, with undefined
   * when the server ended the stream cleanly, or the error that ended it.
   */
  async watch(
    target: CountedRequest,
    path: string,
    query: WatchPodsQuery,
    onRaw: (type: string, object: unknown) => void,
    onDone: (err: KubeError | undefined) => void,
    lane: Lane = 'pods',
  ): Promise<WatchHandle> {
    let settled = false;
    let failure: KubeError | undefined;
    const done = (err: unknown) => {
      if (settled) return;
      settled = true;
      failure = err ? withTarget(toKubeError(err), target) : undefined;
      onDone(failure);
    };
    const params: Record<string, string | number | boolean | undefined> = {
      labelSelector: query.labelSelector || undefined,
      fieldSelector: query.fieldSelector || undefined,
      resourceVersion: query.resourceVersion || undefined,
      timeoutSeconds: query.timeoutSeconds,
      allowWatchBookmarks: query.allowWatchBookmarks ?? true,
    };
    let stream: { abort: () => void } | undefined;
    try {
      await (lane === 'control' ? this.controlBucket : this.bucket).take(this.options.deps.sleep, this.closing.signal);
      stream = await this.wireClients[lane].watch(
        { method: 'GET', path, query: params, known: query.known },
        (type, object) => onRaw(String(type), object),
        done,
      );
    } catch (err) {
      done(err);
    }
    // The promise resolves after the response headers arrived: a non-200 answer or a failed
    // connection has already called `done` by now.
    if (failure) this.options.counter.record('watch', target.resource, failure.code || 'error');
    else this.options.counter.record('watch', target.resource, 200);
    return { abort: () => stream?.abort() };
  }
}
