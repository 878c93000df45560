// The thin driver of one pod's in-place flow (the fleet's driver is
// rollout/runner.ts): observe, `decide`, act, repeat. All judgement lives
// in decide.ts; this file only sends the bodies decide built, waits on the watch-backed cache
// (never polls), and turns the final step into an outcome. A 409 is not retried: the pod is read
// again and decide runs again, so a decision never lands on a pod it did not see.
import type { V1Pod } from '@kubernetes/client-node';
import { KubeError } from '../cluster/kubeError.js';
import type { EventSpec } from '../cluster/requestBodies.js';
import type { WaitOptions, WaitResult } from '../cluster/podCache.js';
import { decide, type DecideContext, type Step } from './decide.js';
import { reopenAfterRefusal } from './gateCondition.js';
import { isPodReady } from './podView.js';
import { resizeRefusal } from './resizeCompletion.js';
import type { InPlaceState } from './state.js';

/** What the driver needs of the cluster module: raw strategic-merge bodies, and events. */
export interface PodWriter {
  patchPod(namespace: string, name: string, body: object): Promise<V1Pod>;
  patchPodStatus(namespace: string, name: string, body: object): Promise<V1Pod>;
  /** Strategic-merge patch of `pods/{name}/resize`. */
  resizePod(namespace: string, name: string, body: object): Promise<V1Pod>;
  createEvent(spec: EventSpec): Promise<unknown>;
}

/** What it needs of the pod cache. */
export interface PodReader {
  get(namespace: string, name: string): V1Pod | undefined;
  getFresh(namespace: string, name: string): Promise<V1Pod | undefined>;
  waitFor(
    namespace: string,
    name: string,
    predicate: (pod: V1Pod) => boolean,
    options: WaitOptions,
  ): Promise<WaitResult>;
}

export interface PodFlowDeps {
  writer: PodWriter;
  reader: PodReader;
  now: () => number;
  /** A monotonic clock in ms (drains within a run are timed on it); default performance.now. */
  monotonicNow?: () => number;
  /** Aborting stops the flow between steps (a second Ctrl-C); the pod is left resumable. */
  signal?: AbortSignal;
  /** Called with every step decided, for progress output and metrics. */
  onStep?: (step: Step, pod: V1Pod | undefined) => void;
  /** Who reports events (source.component); default "kwave". */
  component?: string;
  /**
   * Asked before the flow's first write closes the gate of a pod that is Ready in the very
   * version the close is guarded by (before `onStep` hears of it): whether draining it now keeps
   * the run's budgets. `false` ends the flow `aborted` with `backToBudget`, nothing written (a pod
   * started while not Ready took no budget, and may have turned Ready since).
   */
  mayDrain?: () => boolean;
}

export interface PodRef {
  namespace: string;
  name: string;
  /** The uid when the flow began; a pod with another uid is a replacement (vanished). */
  uid?: string;
}

/** How the flow ended (its `kind` is a FlowEnd, flowEnd.ts; rollout/podEnd.ts holds it to that), with the writes it made. */
export type PodOutcome =
  | { kind: 'done'; direction: 'upgrade' | 'rollback'; state?: InPlaceState; writes: number; message: string }
  | { kind: 'failed'; reason: string; message: string; state?: InPlaceState; writes: number }
  | { kind: 'vanished'; reason: string; message: string; writes: number }
  | { kind: 'refused'; reason: string; message: string; writes: number }
  | { kind: 'skipped'; reason: string; message: string; writes: number }
  /** Held by another plan, revision or writer: the caller decides (report, or --force). */
  | { kind: 'foreign'; reason: string; message: string; state?: InPlaceState; writes: number }
  /** `backToBudget`: the pod turned out Ready and the budget had no room to drain it (`mayDrain`). */
  | { kind: 'aborted'; message: string; writes: number; backToBudget?: true };

export type FlowContext = Omit<DecideContext, 'nowMs' | 'uid' | 'watchedSinceMs' | 'notReadySeenForMs'>;

/**
 * Carries one pod through its flow (upgrade or rollback) from wherever it stands, and returns
 * how it ended. Only bugs and unexpected API errors throw.
 */
export async function runPodFlow(ref: PodRef, ctx: FlowContext, deps: PodFlowDeps): Promise<PodOutcome> {
  try {
    return await flow(ref, ctx, deps);
  } catch (err) {
    // A write refused because the run is leaving (its lease was lost) ends the flow as a stop
    // does; the writes it made before are not counted then.
    if (deps.signal?.aborted) return { kind: 'aborted', message: 'stopped; run again to resume', writes: 0 };
    throw err;
  }
}

async function flow(ref: PodRef, ctx: FlowContext, deps: PodFlowDeps): Promise<PodOutcome> {
  const { namespace, name } = ref;
  let pod = deps.reader.get(namespace, name) ?? (await deps.reader.getFresh(namespace, name));
  const uid = ref.uid ?? pod?.metadata?.uid;
  const watchedSinceMs = deps.now();
  // One context for every decision of this flow, its clock set before each: a spread per step
  // (its uid part included) cost ~0.3 s of CPU at 10,000 pods. `decide` keeps none of it. Every
  // field it will have is there from the start (`notReadySeenForMs` undefined until the drain's
  // sight): a field deleted or added later would turn it into a slow, dictionary-mode object.
  const decideCtx: DecideContext = {
    ...ctx,
    nowMs: watchedSinceMs,
    watchedSinceMs,
    notReadySeenForMs: undefined,
    ...(uid ? { uid } : {}),
  };
  let writes = 0;
  const monotonicNow = deps.monotonicNow ?? (() => performance.now());
  // Once this flow has closed the gate: since when (monotonic) it has seen the pod not Ready.
  let closedGate = false;
  let notReadySince: number | undefined;

  // A write's answer is the newest state of the pod; 409 → read again; 404 → gone.
  const write = async (send: () => Promise<V1Pod>): Promise<V1Pod | undefined> => {
    try {
      const result = await send();
      writes++;
      return result;
    } catch (err) {
      if (err instanceof KubeError && err.code === 409) return deps.reader.getFresh(namespace, name);
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  };

  for (;;) {
    if (deps.signal?.aborted) return { kind: 'aborted', message: 'stopped; run again to resume', writes };
    decideCtx.nowMs = deps.now();
    if (closedGate && pod) {
      const at = monotonicNow();
      notReadySince = isPodReady(pod) ? undefined : (notReadySince ?? at);
      decideCtx.notReadySeenForMs = notReadySince === undefined ? undefined : at - notReadySince;
    }
    const step = decide(pod, decideCtx);
    if (step.kind === 'close-gate' && writes === 0 && deps.mayDrain && isPodReady(pod!) && !deps.mayDrain())
      return { kind: 'aborted', message: 'Ready, and the budget has no room to drain it', writes, backToBudget: true };
    deps.onStep?.(step, pod);
    switch (step.kind) {
      case 'close-gate': {
        const before = writes;
        pod = await write(() => deps.writer.patchPodStatus(namespace, name, step.body));
        closedGate ||= writes > before; // accepted (not a 409)
        break;
      }
      case 'open-gate':
        pod = await write(() => deps.writer.patchPodStatus(namespace, name, step.body));
        break;
      case 'patch':
        try {
          pod = await write(() => deps.writer.patchPod(namespace, name, step.body));
        } catch (err) {
          if (!(err instanceof KubeError) || (err.code !== 403 && err.code !== 422)) throw err;
          // Refused (admission, validation): image and state go in one request, so nothing
          // changed and the pod still runs its old containers. Back in service, and failed.
          writes += await reopenRefused(pod, ctx, deps);
          const message = `the image patch was refused (HTTP ${err.code}): ${err.message}`;
          await recordPodEvent(
            deps,
            pod,
            'Warning',
            ctx.direction === 'upgrade' ? 'InPlaceUpdateFailed' : 'InPlaceRollbackFailed',
            `PatchRefused: ${message}`,
          );
          return { kind: 'failed', reason: 'PatchRefused', message, writes };
        }
        break;
      case 'resize':
        try {
          pod = await write(() => deps.writer.resizePod(namespace, name, step.body));
        } catch (err) {
          if (!(err instanceof KubeError) || (err.code !== 403 && err.code !== 422)) throw err;
          // Refused (validation, admission): the pod keeps its resources; the state says what
          // the flow meant, so a rollback puts back whatever the patch before it changed. A
          // node that can never hold the target is the kubelet's Infeasible, said by the server.
          const { reason, message } = resizeRefusal(err);
          await recordPodEvent(
            deps,
            pod,
            'Warning',
            ctx.direction === 'upgrade' ? 'InPlaceUpdateFailed' : 'InPlaceRollbackFailed',
            `${reason}: ${message}`,
          );
          return { kind: 'failed', reason, message, state: step.state, writes };
        }
        break;
      case 'wait-drain':
      case 'wait-complete':
      case 'wait-ready': {
        // Re-decide when the pod changes, or when the step's own clock runs out.
        const seen = pod?.metadata?.resourceVersion;
        const r = await deps.reader.waitFor(namespace, name, (p) => p.metadata?.resourceVersion !== seen, {
          timeoutMs: Math.max(1, step.retryAfterMs),
          ...(uid ? { uid } : {}),
          ...(deps.signal ? { signal: deps.signal } : {}),
        });
        // Aborted: the signal fired or the cache closed; either way nothing will wake us again.
        if (r === 'aborted') return { kind: 'aborted', message: 'stopped; run again to resume', writes };
        if (r === 'vanished') pod = undefined;
        else if (r === 'timeout') pod = deps.reader.get(namespace, name) ?? pod;
        else pod = r;
        break;
      }
      case 'done':
        if (ctx.direction === 'rollback')
          await recordPodEvent(
            deps,
            pod,
            'Normal',
            'InPlaceRollback',
            `kwave rolled the pod back in place (plan ${ctx.plan})`,
          );
        return {
          kind: 'done',
          direction: ctx.direction,
          ...(step.state ? { state: step.state } : {}),
          writes,
          message: step.message,
        };
      case 'failed': {
        if (step.reclose && pod?.metadata?.name) writes += await reclose(namespace, name, step.reclose, deps);
        await recordPodEvent(
          deps,
          pod,
          'Warning',
          ctx.direction === 'upgrade' ? 'InPlaceUpdateFailed' : 'InPlaceRollbackFailed',
          `${step.reason}: ${step.message}`,
        );
        return {
          kind: 'failed',
          reason: step.reason,
          message: step.message,
          ...(step.state ? { state: step.state } : {}),
          writes,
        };
      }
      case 'vanished':
      case 'refused':
      case 'skipped':
        return { kind: step.kind, reason: step.reason, message: step.message, writes };
      case 'foreign':
        return {
          kind: 'foreign',
          reason: step.reason,
          message: step.message,
          ...(step.state ? { state: step.state } : {}),
          writes,
        };
    }
  }
}

/** Sends a failed step's `reclose` (decide.ts); returns the writes made (0 when the pod is gone). */
async function reclose(namespace: string, name: string, body: object, deps: PodFlowDeps): Promise<number> {
  try {
    await deps.writer.patchPodStatus(namespace, name, body);
    return 1;
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return 0;
    throw err;
  }
}

/** Reopens the gate of a pod whose image patch was refused (gateCondition.ts reopenAfterRefusal); returns the writes made. */
async function reopenRefused(pod: V1Pod | undefined, ctx: FlowContext, deps: PodFlowDeps): Promise<number> {
  if (!pod?.metadata?.name) return 0;
  const body = reopenAfterRefusal(pod, ctx, deps.now());
  if (!body) return 0;
  try {
    await deps.writer.patchPodStatus(pod.metadata.namespace ?? '', pod.metadata.name, body);
    return 1;
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return 0;
    throw err;
  }
}

/** Records an Event on the pod; a failure to record is not a failure of the flow. */
async function recordPodEvent(
  deps: PodFlowDeps,
  pod: V1Pod | undefined,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
): Promise<void> {
  const md = pod?.metadata;
  if (!md?.name || !md.namespace) return;
  try {
    await deps.writer.createEvent({
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: md.name,
        namespace: md.namespace,
        ...(md.uid ? { uid: md.uid } : {}),
      },
      type,
      reason,
      message,
      ...(deps.component ? { component: deps.component } : {}),
    } as EventSpec);
  } catch {
    // Events are best effort, as the kubelet's own recorder treats them.
  }
}
