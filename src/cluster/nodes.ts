// Listing nodes, for their zones (`kwave plan`, `order: spread-zones`). Kept beside Cluster
// rather than in it: nodes are read-only context kwave may not even be allowed to see (a
// namespaced Role cannot grant them), so callers treat a 403 as "no zones", not as a failure.
import { CoreV1Api, Observable, type ConfigurationOptions, type RequestContext, type ResponseContext, type V1Node } from '@kubernetes/client-node';
import type { Cluster } from './cluster.js';
import { KubeError, toKubeError } from './kubeError.js';
import { realSleep, withRetry, type RetryDeps } from './retry.js';

export interface ListNodesOptions {
  /** Page size; default 500. */
  limit?: number;
  /** Abort one request after this long; default 30 s. */
  requestTimeoutMs?: number;
  deps?: RetryDeps;
}

const realDeps: RetryDeps = { sleep: realSleep, random: Math.random, now: () => Date.now() };

function withTimeout(ms: number): ConfigurationOptions {
  const pre = (ctx: RequestContext): Observable<RequestContext> => {
    ctx.setSignal(AbortSignal.timeout(ms));
    return new Observable(Promise.resolve(ctx));
  };
  return {
    middleware: [{ pre, post: (res: ResponseContext) => new Observable(Promise.resolve(res)) }],
    middlewareMergeStrategy: 'append',
  };
}

/**
 * Every node of the cluster, page by page, retried like any kwave request (429, 5xx, dropped
 * connections). Fails with KubeError (403 when the credentials may not list nodes).
 *
 * Not counted in `cluster.requests`: the counter's resources are the ones a rollout writes or
 * watches, and a `list nodes` is a one-off read.
 */
export async function listNodes(cluster: Pick<Cluster, 'kubeConfig'>, options: ListNodesOptions = {}): Promise<V1Node[]> {
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const limit = options.limit ?? 500;
  const config = withTimeout(options.requestTimeoutMs ?? 30_000);
  const items: V1Node[] = [];
  let token: string | undefined;
  do {
    const page = await withRetry(
      async () => (await core.listNodeWithHttpInfo({ limit, _continue: token }, config)).data,
      toKubeError,
      options.deps ?? realDeps,
    );
    items.push(...page.items);
    token = page.metadata?._continue || undefined;
  } while (token);
  return items;
}

/** True when the error says these credentials may not do it (403), as opposed to a broken call. */
export function isForbidden(err: unknown): err is KubeError {
  return err instanceof KubeError && err.code === 403;
}
