// How one request to the API server goes out, for Cluster: each attempt waits its turn at the
// client-side rate limit (TokenBucket), is counted (RequestCounter), times out, and is retried when
// that is safe (retry.ts); it fails only with KubeError. Per-pod requests go over plain HTTPS
// (wire.ts), the rest through client-node's typed calls, and watches through client-node's Watch.
import https from 'node:https';
import {
  Observable,
  Watch,
  type ConfigurationOptions,
  type HttpInfo,
  type KubeConfig,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { toKubeError, withTarget, type KubeError } from './kubeError.js';
import { TokenBucket, type RateLimit } from './rateLimit.js';
import type { KubeResource, KubeVerb, RequestCounter } from './requestCounter.js';
import type { WatchHandle, WatchPodsQuery } from './requestShapes.js';
import { withRetry, type RetryDeps, type RetryPolicy } from './retry.js';
import { WireClient, type WireRequest } from './wire.js';

export interface RequesterOptions {
  deps: RetryDeps;
  retryPolicy: RetryPolicy;
  requestTimeoutMs: number;
  keepAlive: boolean;
  counter: RequestCounter;
  rateLimit: RateLimit;
}

/** What one request does, for its count and, when refused, the message naming the permission. */
export interface CountedRequest {
  verb: KubeVerb;
  resource: KubeResource;
  /** Undefined for cluster-scoped resources. */
  namespace?: string;
}

// Abort reasons, made once: abort() without a reason builds a DOMException each time.
const REQUEST_TIMED_OUT = Object.freeze(new Error('request timed out'));
const CLUSTER_CLOSED = Object.freeze(new Error('cluster closed'));

export class Requester {
  private readonly watcher: Watch;
  private readonly closing = new AbortController();
  private readonly bucket: TokenBucket;
  private readonly wireClient: WireClient;
  /** Typed requests under way, for close() to abort. */
  private readonly inFlight = new Set<AbortController>();
  private sharedAgent?: https.Agent;

  constructor(
    kubeConfig: KubeConfig,
    private readonly options: RequesterOptions,
  ) {
    this.watcher = new Watch(kubeConfig);
    this.bucket = new TokenBucket(options.rateLimit, options.deps.now);
    this.wireClient = new WireClient(kubeConfig, { timeoutMs: options.requestTimeoutMs, keepAlive: options.keepAlive });
  }

  /** The client-side rate limit in force. */
  get rateLimit(): RateLimit {
    return this.bucket.limit;
  }

  /** Stops retries in progress, aborts typed requests under way and closes pooled connections. */
  close(): void {
    this.closing.abort();
    for (const c of this.inFlight) c.abort(CLUSTER_CLOSED);
    this.sharedAgent?.destroy();
    this.wireClient.close();
  }

  /** A request over plain HTTPS (wire.ts): counted per attempt, rate-limited, retried per policy. */
  wire(target: CountedRequest, req: WireRequest): Promise<unknown> {
    const { counter, deps } = this.options;
    const { verb, resource } = target;
    return withRetry(
      async () => {
        await this.bucket.take(deps.sleep, this.closing.signal);
        try {
          const body = await this.wireClient.send(req);
          counter.record(verb, resource, 200);
          return body;
        } catch (thrown) {
          const err = withTarget(toKubeError(thrown), target);
          counter.record(verb, resource, err.code || 'error');
          throw err;
        }
      },
      toKubeError,
      deps,
      { policy: this.options.retryPolicy, signal: this.closing.signal },
    );
  }

  /** One typed client-node request: counted per attempt, retried per policy, failing with KubeError only. */
  typed<T>(target: CountedRequest, send: (options: ConfigurationOptions) => Promise<HttpInfo<T>>, contentType?: string): Promise<T> {
    const { counter, deps } = this.options;
    const { verb, resource } = target;
    return withRetry(
      async () => {
        // Each attempt waits its turn: a retry is another request to the server.
        await this.bucket.take(deps.sleep, this.closing.signal);
        // Its own controller, aborted by its timer or by close(): no listener on a shared signal.
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(REQUEST_TIMED_OUT), this.options.requestTimeoutMs);
        this.inFlight.add(controller);
        try {
          const info = await send(this.requestOptions(controller.signal, contentType));
          counter.record(verb, resource, info.httpStatusCode);
          return info.data;
        } catch (thrown) {
          const err = withTarget(toKubeError(thrown), target);
          counter.record(verb, resource, err.code || 'error');
          throw err;
        } finally {
          clearTimeout(timer);
          this.inFlight.delete(controller);
        }
      },
      toKubeError,
      deps,
      { policy: this.options.retryPolicy, signal: this.closing.signal },
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
    let controller: AbortController | undefined;
    try {
      await this.bucket.take(this.options.deps.sleep, this.closing.signal);
      controller = await this.watcher.watch(path, params, onRaw, done);
    } catch (err) {
      done(err);
    }
    // The promise resolves after the response headers arrived: a non-200 answer or a failed
    // connection has already called `done` by now.
    if (failure) this.options.counter.record('watch', target.resource, failure.code || 'error');
    else this.options.counter.record('watch', target.resource, 200);
    return { abort: () => controller?.abort() };
  }

  /** Per-request middleware: a timeout, the pooled agent, and the patch Content-Type. */
  private requestOptions(signal: AbortSignal, contentType?: string): ConfigurationOptions {
    const pre = (ctx: RequestContext): Observable<RequestContext> => {
      ctx.setSignal(signal);
      if (contentType) ctx.setHeaderParam('Content-Type', contentType);
      const agent = ctx.getAgent();
      // client-node builds a fresh https.Agent for every request; reuse one with keep-alive (same
      // TLS options) unless a proxy agent (a subclass) is in play.
      if (this.options.keepAlive && agent && agent.constructor === https.Agent) {
        this.sharedAgent ??= new https.Agent({ ...(agent as https.Agent).options, keepAlive: true });
        ctx.setAgent(this.sharedAgent);
      }
      return new Observable(Promise.resolve(ctx));
    };
    const middleware: ObservableMiddleware = { pre, post: (res: ResponseContext) => new Observable(Promise.resolve(res)) };
    return { middleware: [middleware], middlewareMergeStrategy: 'append' };
  }
}
