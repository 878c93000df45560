// The per-pod flow of DESIGN.md as a pure state machine: from one observation of a pod (spec,
// status, state annotation, gate condition) and the rollout's context, the next step. No memory
// between calls: a process that starts fresh, or one that crashed after any write, decides the
// same next step from the same pod, which is what makes resume safe (no second patch, no second
// restart, no pod left drained).
//
// Success path, with the gate: close-gate → wait-drain → patch → wait-complete → open-gate →
// wait-ready → done. Three writes: the two gate status patches and the image patch. Without a
// declared gate (readinessGate.required false): patch → wait-complete → wait-ready → done.
//
// Every write carries the resourceVersion of the observation it was decided on, so the API
// server refuses it (409) if the pod changed since: a decision made on a stale cache can never
// land. On 409 the caller observes again and calls `decide` again; it never retries the body.
// One rule for callers: decide on an observation at least as new as the object their own last
// write returned (a watch cache that has not yet delivered that write must be waited for, or the
// returned object used). Writes would only 409, but a step that writes nothing (skip, done,
// failed) taken from a view older than one's own write could be wrong.
import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerUpdate } from '../plan/types.js';
import { containerAtTarget } from './atTarget.js';
import { podCompletion, type PodCompletion } from './completion.js';
import { sameImage, sameImageID } from './image.js';
import {
  conditionSinceMs,
  latestInstantMs,
  conditionStatus,
  containerStatus,
  declaresGate,
  isPodReady,
  podCondition,
  specContainer,
  toMs,
} from './podView.js';
import { encodeState, ownedBy, readState, STATE_ANNOTATION, type ContainerRecord, type Direction, type InPlaceState } from './state.js';

/** Reason on the gate condition while kwave holds a pod out of service. */
export const GATE_CLOSED_REASON = 'InPlaceUpdate';
/** Reason on the gate condition when kwave puts the pod back in service. */
export const GATE_OPEN_REASON = 'InPlaceUpdateComplete';
/** Default of `DecideContext.readyGraceMs`. */
export const DEFAULT_READY_GRACE_MS = 30_000;

export interface DecideContext {
  plan: string;
  revision: string;
  /** 1-based wave the pod belongs to; written into the state annotation. */
  wave: number;
  /**
   * `rollback` reverts what the upgrade of this plan and revision patched, to the images in its
   * annotation. Let an in-flight upgrade of the pod end (done or failed) before rolling it back.
   */
  direction: Direction;
  /** Upgrade: the plan's `update.containers`. Rollback: unused (the pod's annotation says). */
  containers: readonly ContainerUpdate[];
  gate: { conditionType: string; required: boolean };
  nowMs: number;
  drainMs: number;
  /** From the image patch (`startedAt`) to Ready. */
  podTimeoutMs: number;
  minReadyMs: number;
  /**
   * After the gate opens, the least time the pod gets to turn Ready even when `podTimeout` has
   * already run out: a run resumed long after a crash must not fail a pod for the time it was
   * not watched. Default `DEFAULT_READY_GRACE_MS`.
   */
  readyGraceMs?: number;
  /** uid of the pod when its flow began; a pod with another uid is a replacement. */
  uid?: string;
  /**
   * When this process took the pod up (its flow began). A pod patched by an earlier run gets a
   * full `podTimeout` of being watched from then: the time no run watched it — a killed run, a
   * node that could not act — is not the image's fault.
   */
  watchedSinceMs?: number;
}

/** Strategic-merge patch body for `pods/{name}/status` that sets the gate condition. */
export interface GatePatch {
  metadata: { resourceVersion?: string };
  status: {
    conditions: { type: string; status: 'True' | 'False'; reason: string; message: string; lastTransitionTime: string }[];
  };
}

/** Strategic-merge patch body for `pods/{name}`: new images by container name + the state. */
export interface ImagePatch {
  metadata: { resourceVersion?: string; annotations: Record<string, string> };
  spec: { containers: { name: string; image: string }[] };
}

export type RefuseReason = 'GateMissing' | 'ContainerMissing';
export type ForeignReason = 'OtherRollout' | 'MalformedState' | 'UpdatingElsewhere';

/** The next step for one pod. Every step carries a one-line `message` for status output. */
export type Step =
  | { kind: 'vanished'; reason: 'Gone' | 'Replaced' | 'Terminating'; message: string }
  | { kind: 'refuse'; reason: RefuseReason; message: string }
  /** The pod is held by another flow (plan, revision or direction) or by something else: the caller decides. */
  | { kind: 'foreign'; reason: ForeignReason; message: string; state?: InPlaceState }
  | { kind: 'skip'; reason: 'AtTarget' | 'NothingToRollBack'; message: string }
  | { kind: 'close-gate'; body: GatePatch; message: string }
  /** Wait for the pod to turn not Ready, then for `drainMs`. Re-decide on a pod event or after `retryAfterMs`. */
  | { kind: 'wait-drain'; reason: 'StillReady' | 'Draining'; retryAfterMs: number; message: string }
  | { kind: 'patch'; body: ImagePatch; state: InPlaceState; message: string }
  | { kind: 'wait-complete'; retryAfterMs: number; completion: PodCompletion; message: string }
  | { kind: 'open-gate'; body: GatePatch; message: string }
  | { kind: 'wait-ready'; retryAfterMs: number; message: string }
  | { kind: 'done'; state?: InPlaceState; message: string }
  /**
   * `reclose`: the gate patch to send before ending, when the pod failed with its gate open (its
   * new container crashed while turning Ready). A failed pod keeps its gate False (DESIGN.md),
   * closed in this flow's name so that a rollback or a re-run recognises it.
   */
  | { kind: 'failed'; reason: string; message: string; state?: InPlaceState; reclose?: GatePatch };

export type StepKind = Step['kind'];

/** The message kwave puts on the gate condition; it names the flow that closed the gate. */
export function gateMessage(direction: Direction, plan: string, revision: string, complete = false): string {
  return `kwave: ${direction} by plan ${plan} (revision ${revision})${complete ? ' complete' : ''}`;
}

const GATE_OWNER = /^kwave: (upgrade|rollback) by plan (\S+) \(revision (\S+)\)$/;

/** Which kwave flow closed the pod's gate, read back from the condition; undefined if not kwave. */
export function gateOwner(pod: V1Pod, conditionType: string): { direction: Direction; plan: string; revision: string } | undefined {
  const c = podCondition(pod, conditionType);
  if (c?.status !== 'False' || c.reason !== GATE_CLOSED_REASON) return undefined;
  const m = GATE_OWNER.exec(c.message ?? '');
  if (!m) return undefined;
  return { direction: m[1] as Direction, plan: m[2] as string, revision: m[3] as string };
}

/**
 * The next step for `pod` (undefined: not found). Pure: the same pod and context always give
 * the same step.
 */
export function decide(pod: V1Pod | undefined, ctx: DecideContext): Step {
  if (pod === undefined) return { kind: 'vanished', reason: 'Gone', message: 'the pod no longer exists' };
  if (ctx.uid !== undefined && pod.metadata?.uid !== ctx.uid) {
    return { kind: 'vanished', reason: 'Replaced', message: `the pod was replaced (uid ${pod.metadata?.uid ?? 'none'}, was ${ctx.uid})` };
  }
  if (pod.metadata?.deletionTimestamp) return { kind: 'vanished', reason: 'Terminating', message: 'the pod is being deleted' };

  const st = readState(pod);
  const step =
    st.kind === 'ok' && isOwn(st.state, ctx)
      ? follow(pod, st.state, ctx)
      : ctx.direction === 'upgrade' && st.kind === 'ok' && ownedBy(st.state, ctx.plan, ctx.revision) && st.state.direction === 'rollback'
        ? resumeOwnRollback(pod, st.state, ctx)
        : ctx.direction === 'upgrade'
          ? startUpgrade(pod, ctx)
          : startRollback(pod, ctx);
  return step.kind === 'failed' ? keepDrained(pod, ctx, step) : step;
}

function isOwn(state: InPlaceState, ctx: DecideContext): boolean {
  return ownedBy(state, ctx.plan, ctx.revision) && state.direction === ctx.direction;
}

/**
 * An upgrade meeting a rollback this revision left unfinished (a run that halted while the
 * kubelet could not act, say). The rollback is carried on as its state says until its images are
 * back (no second patch while a restart is pending); then the upgrade starts over from there —
 * with the gate still closed by our own flow, straight to the patch.
 */
function resumeOwnRollback(pod: V1Pod, state: InPlaceState, ctx: DecideContext): Step {
  // Gate reopened: the rollback ended; the upgrade starts from the beginning.
  if (declaresGate(pod, ctx.gate.conditionType) && conditionStatus(pod, ctx.gate.conditionType) === 'True') return startUpgrade(pod, ctx);
  const step = follow(pod, state, { ...ctx, direction: 'rollback' });
  if (step.kind === 'wait-complete' || step.kind === 'failed') return step;
  return startUpgrade(pod, ctx);
}

// ---------------------------------------------------------------------------------------------
// Before the image patch: upgrade.

function startUpgrade(pod: V1Pod, ctx: DecideContext): Step {
  const missing = ctx.containers.filter((c) => specContainer(pod, c.name) === undefined).map((c) => c.name);
  if (missing.length > 0) {
    return { kind: 'refuse', reason: 'ContainerMissing', message: `the pod has no container named ${missing.join(', ')}` };
  }
  const gateType = ctx.gate.conditionType;
  const gated = declaresGate(pod, gateType);
  const atTarget = ctx.containers.every((c) => containerAtTarget(pod, c));
  const toChange = ctx.containers.filter((c) => !sameImage(specContainer(pod, c.name)?.image ?? '', c.image));

  if (gated && conditionStatus(pod, gateType) === 'False') {
    const foreign = heldByOther(pod, ctx);
    if (foreign) return foreign;
    // Drained by this flow (or by nobody we know of) and not yet patched.
    if (atTarget) return openGate(pod, ctx, 'already at the target images; reopening the gate');
    if (toChange.length === 0) return updatingElsewhere();
    return drainThenPatch(pod, ctx, () => upgradePatch(pod, ctx, toChange));
  }

  if (atTarget) return { kind: 'skip', reason: 'AtTarget', message: 'already at the target images' };
  if (!gated && ctx.gate.required) {
    return {
      kind: 'refuse',
      reason: 'GateMissing',
      message: `the pod does not declare the readiness gate ${gateType} in spec.readinessGates`,
    };
  }
  if (toChange.length === 0) return updatingElsewhere();
  if (!gated) return upgradePatch(pod, ctx, toChange);
  return closeGate(pod, ctx);
}

function updatingElsewhere(): Step {
  return {
    kind: 'foreign',
    reason: 'UpdatingElsewhere',
    message: 'the spec already names the target images but not every container runs them: something else is updating the pod, or the new image fails',
  };
}

/**
 * A gate held False by something that is not this flow: another kwave flow (named on the
 * condition or in the annotation), or a damaged annotation we cannot read. Undefined when the
 * gate is ours to use (closed by this flow, or by nobody kwave knows).
 */
function heldByOther(pod: V1Pod, ctx: DecideContext): Step | undefined {
  const owner = gateOwner(pod, ctx.gate.conditionType);
  // Closed by this revision, upgrade or rollback: ours to resume (OtherRollout is for others only).
  if (owner && ownedBy(owner, ctx.plan, ctx.revision)) return undefined;
  const st = readState(pod);
  if (owner) {
    return {
      kind: 'foreign',
      reason: 'OtherRollout',
      message: `the gate is held closed by the ${owner.direction} of plan ${owner.plan} (revision ${owner.revision})`,
      ...(st.kind === 'ok' ? { state: st.state } : {}),
    };
  }
  if (st.kind === 'malformed') {
    return { kind: 'foreign', reason: 'MalformedState', message: `the gate is closed and ${STATE_ANNOTATION} is unreadable: ${st.error}` };
  }
  if (st.kind === 'ok' && !ownedBy(st.state, ctx.plan, ctx.revision)) {
    const s = st.state;
    return {
      kind: 'foreign',
      reason: 'OtherRollout',
      message: `the gate is closed and the pod carries the ${s.direction} state of plan ${s.plan} (revision ${s.revision})`,
      state: s,
    };
  }
  return undefined;
}

function upgradePatch(pod: V1Pod, ctx: DecideContext, toChange: readonly ContainerUpdate[]): Step {
  const containers: Record<string, ContainerRecord> = {};
  for (const c of toChange) {
    const cs = containerStatus(pod, c.name);
    containers[c.name] = {
      fromImage: specContainer(pod, c.name)?.image ?? '',
      fromImageID: cs?.imageID ?? '',
      fromContainerID: cs?.containerID ?? '',
      fromRestartCount: cs?.restartCount ?? 0,
      toImage: c.image,
    };
  }
  return imagePatch(pod, ctx, containers);
}

// ---------------------------------------------------------------------------------------------
// Before the image patch: rollback (the images to restore come from the upgrade's annotation).

function startRollback(pod: V1Pod, ctx: DecideContext): Step {
  const gateType = ctx.gate.conditionType;
  const gated = declaresGate(pod, gateType);
  const gateFalse = gated && conditionStatus(pod, gateType) === 'False';
  const st = readState(pod);
  const upgrade = st.kind === 'ok' && ownedBy(st.state, ctx.plan, ctx.revision) ? st.state : undefined;

  if (upgrade === undefined || upgrade.direction !== 'upgrade') {
    // Never patched by this revision. If its upgrade drained it before the patch, reopen.
    const owner = gateOwner(pod, gateType);
    const ours = ownedBy(owner, ctx.plan, ctx.revision);
    if (gateFalse && ours) return openGate(pod, ctx, 'drained but never patched; reopening the gate');
    return { kind: 'skip', reason: 'NothingToRollBack', message: 'this revision of the plan never patched the pod' };
  }

  const back = Object.entries(upgrade.containers).every(([name, rec]) => isBack(pod, name, rec));
  if (back) {
    if (gated && conditionStatus(pod, gateType) !== 'True') return openGate(pod, ctx, 'already back on the recorded images; reopening the gate');
    return { kind: 'skip', reason: 'AtTarget', message: 'already back on the recorded images' };
  }
  const build = () => rollbackPatch(pod, ctx, upgrade);
  if (!gated) return build();
  if (!gateFalse) return closeGate(pod, ctx);
  // Closed by this rollback, or still closed from the upgrade (a failed pod): either way drained.
  const owner = gateOwner(pod, gateType);
  if (owner && !ownedBy(owner, ctx.plan, ctx.revision)) {
    return {
      kind: 'foreign',
      reason: 'OtherRollout',
      message: `the gate is held closed by the ${owner.direction} of plan ${owner.plan} (revision ${owner.revision})`,
      state: upgrade,
    };
  }
  return drainThenPatch(pod, ctx, build);
}

/** A container already running its pre-upgrade image again (spec and image ID). */
function isBack(pod: V1Pod, name: string, rec: ContainerRecord): boolean {
  const cs = containerStatus(pod, name);
  if (!sameImage(specContainer(pod, name)?.image ?? '', rec.fromImage) || !cs?.state?.running) return false;
  return rec.fromImageID !== '' ? sameImageID(cs.imageID ?? '', rec.fromImageID) : sameImage(cs.image ?? '', rec.fromImage);
}

function rollbackPatch(pod: V1Pod, ctx: DecideContext, upgrade: InPlaceState): Step {
  const containers: Record<string, ContainerRecord> = {};
  for (const [name, up] of Object.entries(upgrade.containers)) {
    const cs = containerStatus(pod, name);
    const rec: ContainerRecord = {
      fromImage: specContainer(pod, name)?.image ?? '',
      fromImageID: cs?.imageID ?? '',
      fromContainerID: cs?.containerID ?? '',
      fromRestartCount: cs?.restartCount ?? 0,
      toImage: up.fromImage,
    };
    if (up.fromImageID !== '') rec.toImageID = up.fromImageID;
    if (up.fromContainerID !== '') rec.originContainerID = up.fromContainerID;
    containers[name] = rec;
  }
  return imagePatch(pod, ctx, containers);
}

// ---------------------------------------------------------------------------------------------
// Shared steps.

function drainThenPatch(pod: V1Pod, ctx: DecideContext, patch: () => Step): Step {
  const gateType = ctx.gate.conditionType;
  // Unknown closing time (a condition written without one): count the drain as served.
  const closedSince = conditionSinceMs(pod, gateType);
  const closedAt = closedSince ?? ctx.nowMs - ctx.drainMs;
  if (isPodReady(pod)) {
    // The kubelet has not yet turned the pod not Ready; if it never does (node gone), give up.
    const giveUpAt = closedAt + ctx.podTimeoutMs;
    if (ctx.nowMs >= giveUpAt) {
      return { kind: 'failed', reason: 'DrainTimeout', message: `the pod stayed Ready for ${fmtMs(ctx.podTimeoutMs)} after its gate was closed` };
    }
    return { kind: 'wait-drain', reason: 'StillReady', retryAfterMs: giveUpAt - ctx.nowMs, message: 'gate closed; waiting for the pod to turn not Ready' };
  }
  // A drain of 0 waits for nothing; any other counts from the end of the stored second.
  const drainedAt = ctx.drainMs > 0 && closedSince !== undefined ? latestInstantMs(closedSince) + ctx.drainMs : closedAt + ctx.drainMs;
  if (ctx.nowMs < drainedAt) {
    return { kind: 'wait-drain', reason: 'Draining', retryAfterMs: drainedAt - ctx.nowMs, message: `draining for ${fmtMs(drainedAt - ctx.nowMs)} more` };
  }
  return patch();
}

function imagePatch(pod: V1Pod, ctx: DecideContext, containers: Record<string, ContainerRecord>): Step {
  const state: InPlaceState = {
    plan: ctx.plan,
    revision: ctx.revision,
    wave: ctx.wave,
    startedAt: new Date(ctx.nowMs).toISOString(),
    direction: ctx.direction,
    containers,
  };
  const names = Object.keys(containers).sort();
  const body: ImagePatch = {
    metadata: { ...rv(pod), annotations: { [STATE_ANNOTATION]: encodeState(state) } },
    spec: { containers: names.map((name) => ({ name, image: (containers[name] as ContainerRecord).toImage })) },
  };
  const what = names.map((n) => `${n}=${(containers[n] as ContainerRecord).toImage}`).join(', ');
  return { kind: 'patch', body, state, message: `${ctx.direction === 'upgrade' ? 'setting' : 'restoring'} ${what}` };
}

/** A failed step with the patch that closes the gate again, when it is open; see `reclose`. */
function keepDrained(pod: V1Pod, ctx: DecideContext, step: Extract<Step, { kind: 'failed' }>): Step {
  const type = ctx.gate.conditionType;
  if (!declaresGate(pod, type) || conditionStatus(pod, type) === 'False') return step;
  // Unguarded (no resourceVersion): the pod has failed whatever changed since, and its gate must end False.
  const { metadata: _guard, ...unguarded } = gatePatch(pod, ctx, 'False', GATE_CLOSED_REASON, gateMessage(ctx.direction, ctx.plan, ctx.revision));
  return { ...step, reclose: { metadata: {}, ...unguarded } };
}

function closeGate(pod: V1Pod, ctx: DecideContext): Step {
  return {
    kind: 'close-gate',
    body: gatePatch(pod, ctx, 'False', GATE_CLOSED_REASON, gateMessage(ctx.direction, ctx.plan, ctx.revision)),
    message: `closing the gate ${ctx.gate.conditionType}`,
  };
}

function openGate(pod: V1Pod, ctx: DecideContext, message: string): Step {
  return {
    kind: 'open-gate',
    body: gatePatch(pod, ctx, 'True', GATE_OPEN_REASON, gateMessage(ctx.direction, ctx.plan, ctx.revision, true)),
    message,
  };
}

/**
 * The flow's gate patch. Like the image patch it carries the resourceVersion this decision saw
 * (STYLE.md asks it of the image patch only): a pod that changed since answers 409 and is decided
 * again, so not even a gate write lands on a pod the decision did not see.
 */
function gatePatch(pod: V1Pod, ctx: DecideContext, status: 'True' | 'False', reason: string, message: string): GatePatch {
  return {
    metadata: rv(pod),
    status: {
      conditions: [{ type: ctx.gate.conditionType, status, reason, message, lastTransitionTime: new Date(ctx.nowMs).toISOString() }],
    },
  };
}

function rv(pod: V1Pod): { resourceVersion?: string } {
  const v = pod.metadata?.resourceVersion;
  return v === undefined ? {} : { resourceVersion: v };
}

// ---------------------------------------------------------------------------------------------
// After the image patch: the pod carries this flow's state.

function follow(pod: V1Pod, state: InPlaceState, ctx: DecideContext): Step {
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
    gateOpenedAt === undefined ? deadline : Math.max(deadline, gateOpenedAt + (ctx.readyGraceMs ?? DEFAULT_READY_GRACE_MS));

  if (completion.status === 'failed') {
    return { kind: 'failed', reason: completion.reason ?? 'Failed', message: completion.message ?? 'the new container failed', state };
  }
  if (completion.status === 'waiting') {
    if (ctx.nowMs >= effectiveDeadline) {
      return {
        kind: 'failed',
        reason: 'Timeout',
        message: `not complete within podTimeout ${fmtMs(ctx.podTimeoutMs)}: ${completion.message ?? completion.reason ?? 'waiting'}`,
        state,
      };
    }
    return { kind: 'wait-complete', retryAfterMs: effectiveDeadline - ctx.nowMs, completion, message: completion.message ?? 'waiting for the kubelet' };
  }
  if (!gateOpen) return openGate(pod, ctx, 'new images confirmed by image ID; reopening the gate');

  if (isPodReady(pod)) {
    const since = readySince(pod, state, gateOpenedAt);
    // As for the drain: minReadySeconds counts from the end of the stored second, 0 waits for nothing.
    const stableAt = ctx.minReadyMs > 0 ? latestInstantMs(since) + ctx.minReadyMs : since;
    // Ready is enough without minReadySeconds: the times above are the server's and the kubelet's,
    // and a runner whose clock is behind theirs would otherwise wait out the difference.
    if (ctx.minReadyMs === 0 || ctx.nowMs >= stableAt) return { kind: 'done', state, message: `${ctx.direction === 'upgrade' ? 'upgraded' : 'rolled back'}` };
    return { kind: 'wait-ready', retryAfterMs: stableAt - ctx.nowMs, message: `Ready; counting minReadySeconds, ${fmtMs(stableAt - ctx.nowMs)} left` };
  }
  if (ctx.nowMs >= effectiveDeadline) {
    return { kind: 'failed', reason: 'Timeout', message: `the pod did not become Ready within podTimeout ${fmtMs(ctx.podTimeoutMs)}`, state };
  }
  return { kind: 'wait-ready', retryAfterMs: effectiveDeadline - ctx.nowMs, message: 'waiting for the pod to become Ready' };
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

function fmtMs(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
}
