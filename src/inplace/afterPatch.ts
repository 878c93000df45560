// The per-pod flow after the image patch, when the pod carries this flow's state: the spec still
// as set, the new containers confirmed by image ID (completion.ts), the gate reopened, then Ready
// for minReadySeconds — or failed, once podTimeout (and the grace after the gate opened) ran out.
// Pure; part of `decide`.
import type { V1Pod } from '@kubernetes/client-node';
import { formatDuration } from '../durationText.js';
import { podCompletion } from './completion.js';
import { openGate, resourceVersionGuard } from './gateCondition.js';
import { sameImage } from './image.js';
import {
  conditionSinceMs,
  conditionStatus,
  containerStatus,
  declaresGate,
  isPodReady,
  latestInstantMs,
  specContainer,
  toMs,
} from './podView.js';
import { formatResources, sameResources, specResources, type Resources } from './resources.js';
import type { InPlaceState } from './state.js';
import { DEFAULT_READY_GRACE_MS, type DecideContext, type Step } from './step.js';

export function follow(pod: V1Pod, state: InPlaceState, ctx: DecideContext): Step {
  const toResize: { name: string; resources: Resources }[] = [];
  for (const [name, rec] of Object.entries(state.containers)) {
    const image = specContainer(pod, name)?.image;
    if (image === undefined || !sameImage(image, rec.toImage)) {
      return {
        kind: 'failed',
        reason: 'SpecChanged',
        message: `container ${name} now asks for ${image ?? 'nothing'}, not ${rec.toImage} as this rollout set: something else changed the pod`,
        state,
      };
    }
    if (rec.toResources === undefined) continue;
    const asked = specResources(pod, name);
    if (sameResources(asked, rec.toResources)) continue;
    if (rec.fromResources !== undefined && sameResources(asked, rec.fromResources)) {
      toResize.push({ name, resources: rec.toResources });
      continue;
    }
    return {
      kind: 'failed',
      reason: 'SpecChanged',
      message: `container ${name} now asks for ${formatResources(asked)}, not ${formatResources(rec.toResources)} as this rollout set: something else changed the pod`,
      state,
    };
  }
  // The state is on the pod (with the new images, if any): now the resize, itself guarded.
  if (toResize.length > 0) {
    return {
      kind: 'resize',
      body: { metadata: resourceVersionGuard(pod), spec: { containers: toResize } },
      state,
      message: `resizing ${toResize.map((c) => `${c.name} to ${formatResources(c.resources)}`).join(', ')}`,
    };
  }
  const gateType = ctx.gate.conditionType;
  const gated = declaresGate(pod, gateType);
  const gateOpen = !gated || conditionStatus(pod, gateType) === 'True';
  const completion = podCompletion(pod, state);
  const patchedAt = toMs(state.startedAt) ?? ctx.nowMs;
  const deadline = Math.max(patchedAt, ctx.watchedSinceMs ?? patchedAt) + ctx.podTimeoutMs;
  // Once kwave has opened the gate, the pod always gets the grace, however late that was.
  const gateOpenedAt = gated && gateOpen ? conditionSinceMs(pod, gateType) : undefined;
  const effectiveDeadline =
    gateOpenedAt === undefined
      ? deadline
      : Math.max(deadline, latestInstantMs(gateOpenedAt) + (ctx.readyGraceMs ?? DEFAULT_READY_GRACE_MS));

  if (completion.status === 'failed') {
    if (
      completion.reason === 'CrashLoopBackOff' &&
      gateOpenedAt !== undefined &&
      servedWithGateOpen(pod, state, gateOpenedAt, ctx.minReadyMs)
    )
      return {
        kind: 'done',
        state,
        message: `${finishedWord(ctx)} (a container crashed since, after minReadySeconds)`,
      };
    return {
      kind: 'failed',
      reason: completion.reason ?? 'Failed',
      message: completion.message ?? 'the new container failed',
      state,
    };
  }
  if (completion.status === 'waiting') {
    if (ctx.nowMs >= effectiveDeadline) {
      return {
        kind: 'failed',
        // A resize the kubelet kept deferring (the node stayed full) is named as such.
        reason: completion.reason === 'ResizeDeferred' ? 'ResizeDeferred' : 'Timeout',
        message: `not complete within podTimeout ${formatDuration(ctx.podTimeoutMs)}: ${completion.message ?? completion.reason ?? 'waiting'}`,
        state,
      };
    }
    return {
      kind: 'wait-complete',
      retryAfterMs: effectiveDeadline - ctx.nowMs,
      completion,
      message: completion.message ?? 'waiting for the kubelet',
    };
  }
  if (!gateOpen) return openGate(pod, ctx, 'change confirmed by the kubelet; reopening the gate');

  if (isPodReady(pod)) {
    const since = readySince(pod, state, gateOpenedAt);
    // As for the drain: minReadySeconds counts from the end of the stored second, 0 waits for nothing.
    const stableAt = ctx.minReadyMs > 0 ? latestInstantMs(since) + ctx.minReadyMs : since;
    // Ready is enough without minReadySeconds: the times above are the server's and the kubelet's,
    // and a runner whose clock is behind theirs would otherwise wait out the difference.
    if (ctx.minReadyMs === 0 || ctx.nowMs >= stableAt) return { kind: 'done', state, message: finishedWord(ctx) };
    return {
      kind: 'wait-ready',
      retryAfterMs: stableAt - ctx.nowMs,
      message: `Ready; counting minReadySeconds, ${formatDuration(stableAt - ctx.nowMs)} left`,
    };
  }
  if (ctx.nowMs >= effectiveDeadline) {
    return {
      kind: 'failed',
      reason: 'Timeout',
      message: `the pod did not become Ready within podTimeout ${formatDuration(ctx.podTimeoutMs)}`,
      state,
    };
  }
  return {
    kind: 'wait-ready',
    retryAfterMs: effectiveDeadline - ctx.nowMs,
    message: 'waiting for the pod to become Ready',
  };
}

const finishedWord = (ctx: DecideContext) => (ctx.direction === 'upgrade' ? 'upgraded' : 'rolled back');

/**
 * Whether each of the state's containers not running now is one the flow proved (started before
 * the gate opened) that ended no earlier than the gate's opening plus minReadySeconds (the latest
 * instant the whole-second opening can stand for; with no minReadySeconds, the opening itself).
 * The flow was done then: a run that saw the pod Ready in time said so, and a crash after that
 * window is the application's, not the upgrade's. A re-run (or a late watch) that meets the
 * kubelet's back-off after such a crash judges alike, instead of failing a proven pod.
 */
function servedWithGateOpen(pod: V1Pod, state: InPlaceState, gateOpenedAt: number, minReadyMs: number): boolean {
  const windowEnd = minReadyMs > 0 ? latestInstantMs(gateOpenedAt) + minReadyMs : gateOpenedAt;
  for (const name of Object.keys(state.containers)) {
    const cs = containerStatus(pod, name);
    if (cs?.state?.running) continue;
    const ended = cs?.lastState?.terminated;
    const started = toMs(ended?.startedAt as Date | string | undefined);
    const finished = toMs(ended?.finishedAt as Date | string | undefined);
    if (started === undefined || finished === undefined || started > gateOpenedAt || finished < windowEnd) return false;
  }
  return true;
}

/**
 * Since when the pod has been Ready on the new images: the latest of the Ready condition's
 * transition, the gate's opening and the new containers' start. The kubelet may restart a
 * container between two status reports without Ready ever turning False, so the Ready condition
 * alone could date from before the upgrade.
 */
function readySince(pod: V1Pod, state: InPlaceState, gateOpenedAt: number | undefined): number {
  const times = [conditionSinceMs(pod, 'Ready'), gateOpenedAt];
  for (const name of Object.keys(state.containers)) {
    times.push(toMs(containerStatus(pod, name)?.state?.running?.startedAt as Date | string | undefined));
  }
  const known = times.filter((t): t is number => t !== undefined);
  return known.length > 0 ? Math.max(...known) : Number.NEGATIVE_INFINITY;
}
