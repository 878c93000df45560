// `strategy.prePull` for `kwave run`: the puller port over the cluster (create, get and delete
// pods; a pod cache of this plan's pullers to follow them by watch) and the per-wave step the
// runner calls: plan the nodes (node status.images from the node cache), pull, report. Pullers a
// killed run left behind are deleted before the first wave pulls.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import {
  KubeError,
  PodCache,
  type Cluster,
  type NodeCache,
  type WaitOptions,
  type WaitResult,
} from '../cluster/index.js';
import type { Plan } from '../plan/types.js';
import { prePull, type PullerPort } from '../rollout/prePull.js';
import { PRE_PULL_LABEL, prePullPlan, type PullerOwner } from '../rollout/prePullPlan.js';
import type { PrePullReport } from '../rollout/runnerDeps.js';

export interface PrePuller {
  pull(wave: number, pods: readonly V1Pod[]): Promise<PrePullReport>;
  close(): void;
}

/** Resolves true once `name` is in the cache (a pod just created may not have come by watch yet). */
function appeared(
  cache: PodCache,
  namespace: string,
  name: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  if (cache.get(namespace, name)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      off();
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const off = cache.onChange(({ pod }) => {
      if (pod.metadata?.namespace === namespace && pod.metadata.name === name) done(true);
    });
    const onAbort = () => done(false);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => done(false), timeoutMs);
  });
}

export function prePuller(cluster: Cluster, plan: Plan, nodes: NodeCache | undefined, signal: AbortSignal): PrePuller {
  let cache: PodCache | undefined;
  let owner: PullerOwner | undefined;
  const start = async (): Promise<PodCache> => {
    if (cache) return cache;
    cache = new PodCache(cluster, {
      namespaces: plan.target.namespaces,
      labelSelector: `${PRE_PULL_LABEL}=${plan.name}`,
    });
    await cache.synced;
    for (const left of cache.list())
      await cluster.deletePod(left.metadata!.namespace!, left.metadata!.name!).catch(() => undefined);
    const recordNs = plan.target.namespaces[0]!;
    const record = await cluster.getConfigMap(recordNs, `kwave-${plan.name}`).catch(() => undefined);
    if (record?.metadata?.uid) owner = { name: `kwave-${plan.name}`, uid: record.metadata.uid, namespace: recordNs };
    return cache;
  };
  const port = (c: PodCache): PullerPort => ({
    create: (namespace, body) => cluster.createPod(namespace, body),
    get: (namespace, name) => cluster.getPod(namespace, name),
    remove: (namespace, name) => cluster.deletePod(namespace, name),
    waitFor: async (namespace, name, predicate, options: WaitOptions): Promise<WaitResult> => {
      if (!(await appeared(c, namespace, name, options.timeoutMs, options.signal)))
        return options.signal?.aborted ? 'aborted' : 'timeout';
      return c.waitFor(namespace, name, predicate, options);
    },
  });
  const nodeOf = (name: string): V1Node | undefined => {
    const entry = nodes?.get(name);
    return entry && 'node' in entry ? entry.node : undefined;
  };
  return {
    pull: async (wave, pods) => {
      const pullPlan = prePullPlan(pods, plan.update.containers, nodeOf);
      if (pullPlan.targets.length === 0) return { ok: true, pulled: [], skipped: pullPlan.skipped };
      let c: PodCache;
      try {
        c = await start();
      } catch (err) {
        const why =
          err instanceof KubeError && err.code === 403
            ? `listing pods to follow the puller pods is forbidden (${err.message})`
            : `starting the puller watch failed: ${(err as Error).message}`;
        return { ok: false, message: `pre-pull: ${why}`, pulled: [], skipped: pullPlan.skipped };
      }
      const result = await prePull(pullPlan.targets, port(c), {
        plan: plan.name,
        wave,
        concurrency: plan.strategy.prePullConcurrency,
        timeoutMs: plan.strategy.podTimeoutMs,
        signal,
        ...(owner ? { owner } : {}),
      });
      return { ...result, skipped: pullPlan.skipped };
    },
    close: () => cache?.close(),
  };
}
