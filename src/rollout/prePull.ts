// Image pre-pull, the imperative part: before a wave drains any pod, one short-lived puller pod
// per node that lacks a target image (prePullPlan.ts says which), at most `concurrency` nodes at
// once; each is followed by watch until the kubelet reports its images pulled or a pull error,
// then deleted. The first failure stops the rest (their pullers are deleted too) and fails the
// wave before any pod is drained. Talks to the cluster through a small port (the CLI plugs in
// Cluster and a pod cache of the pullers).
import type { V1Pod } from '@kubernetes/client-node';
import pLimit from 'p-limit';
import { KubeError } from '../cluster/kubeError.js';
import type { WaitOptions, WaitResult } from '../cluster/podCache.js';
import { pullerPod, pullVerdict, type PullerOwner, type PullTarget } from './prePullPlan.js';

export interface PullerPort {
  create(namespace: string, body: object): Promise<V1Pod>;
  get(namespace: string, name: string): Promise<V1Pod>;
  remove(namespace: string, name: string): Promise<void>;
  waitFor(
    namespace: string,
    name: string,
    predicate: (pod: V1Pod) => boolean,
    options: WaitOptions,
  ): Promise<WaitResult>;
}

export type PrePullResult = { ok: true; pulled: string[] } | { ok: false; message: string; pulled: string[] };

export interface PrePullOptions {
  plan: string;
  wave: number;
  concurrency: number;
  /** Per node, from the puller's creation to its images pulled. */
  timeoutMs: number;
  owner?: PullerOwner;
  /** A hard abort: pullers in flight are deleted, the result is a failure. */
  signal?: AbortSignal;
}

const forbidden = (err: unknown) => err instanceof KubeError && err.code === 403;

/** Pulls on every target, `concurrency` nodes at once; ok only when every node pulled every image. */
export async function prePull(
  targets: readonly PullTarget[],
  port: PullerPort,
  options: PrePullOptions,
): Promise<PrePullResult> {
  const limit = pLimit(Math.max(1, options.concurrency));
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const pulled: string[] = [];
  let failure: string | undefined;
  const fail = (message: string) => {
    failure ??= message;
    stop.abort();
  };
  await Promise.all(
    targets.map((t) =>
      limit(async () => {
        if (signal.aborted) return;
        const outcome = await pullOn(t, port, options, signal);
        if (outcome === 'pulled') pulled.push(t.node);
        else if (outcome !== 'aborted') fail(outcome);
      }),
    ),
  );
  if (options.signal?.aborted && failure === undefined) failure = 'pre-pull interrupted';
  return failure === undefined
    ? { ok: true, pulled: pulled.sort() }
    : { ok: false, message: failure, pulled: pulled.sort() };
}

/** One node: create its puller, wait for the verdict, delete it. 'pulled', 'aborted', or why it failed. */
async function pullOn(
  t: PullTarget,
  port: PullerPort,
  options: PrePullOptions,
  signal: AbortSignal,
): Promise<'pulled' | 'aborted' | string> {
  const body = pullerPod(options.plan, options.wave, t, options.owner);
  const name = (body.metadata as { name: string }).name;
  let pod: V1Pod;
  try {
    pod = await port.create(t.namespace, body);
  } catch (err) {
    if (forbidden(err))
      return `pre-pull on node ${t.node}: creating the puller pod is forbidden (${(err as Error).message}); strategy.prePull needs pods create and delete (deploy/optional/pre-pull, Role kwave-pre-pull)`;
    // 409: a puller of this wave left by a killed run (or a retried create that went through): take it.
    if (!(err instanceof KubeError && err.code === 409))
      return `pre-pull on node ${t.node}: creating the puller pod failed: ${(err as Error).message}`;
    pod = await port.get(t.namespace, name);
  }
  try {
    const seen = await port.waitFor(t.namespace, name, (p) => pullVerdict(p).kind !== 'pending', {
      uid: pod.metadata?.uid,
      timeoutMs: options.timeoutMs,
      signal,
    });
    if (seen === 'aborted') return 'aborted';
    if (seen === 'timeout')
      return `pre-pull on node ${t.node}: ${t.images.join(', ')} not pulled after ${Math.round(options.timeoutMs / 1000)}s`;
    if (seen === 'vanished')
      return `pre-pull on node ${t.node}: the puller pod ${t.namespace}/${name} was deleted before it pulled`;
    const verdict = pullVerdict(seen);
    if (verdict.kind === 'failed')
      return `pre-pull on node ${t.node}: ${verdict.image}: ${verdict.reason}: ${verdict.message}`;
    return 'pulled';
  } finally {
    await port.remove(t.namespace, name).catch((err: unknown) => {
      // Gone already is fine; anything else leaves a finished pod behind, which the record's owner reference cleans up.
      if (!(err instanceof KubeError && err.code === 404)) return undefined;
      return undefined;
    });
  }
}
