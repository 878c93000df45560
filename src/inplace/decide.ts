// The per-pod flow (docs/rollout.md, "Per pod") as a pure state machine: from one observation of a pod (spec,
// status, state annotation, gate condition) and the rollout's context, the next step. No memory
// between calls: a process that starts fresh, or one that crashed after any write, decides the
// same next step from the same pod, which is what makes resume safe (no second patch, no second
// restart, no pod left drained).
//
// Success path, with the gate: close-gate → wait-drain → patch → wait-complete → open-gate →
// wait-ready → done. Three writes: the two gate status patches and the image patch. Without a
// declared gate (readinessGate.required false): patch → wait-complete → wait-ready → done.
// A resize adds one write after the patch (which then carries the state, and the images if any):
// resize (`pods/resize`). A resize that restarts no container is not drained (`strategy.drain`
// whenRestarting): patch → resize → wait-complete → done, two writes, the pod Ready throughout.
//
// Every write carries the resourceVersion of the observation it was decided on, so the API
// server refuses it (409) if the pod changed since: a decision made on a stale cache can never
// land. On 409 the caller observes again and calls `decide` again; it never retries the body.
// One rule for callers: decide on an observation at least as new as the object their own last
// write returned (a watch cache that has not yet delivered that write must be waited for, or the
// returned object used). Writes would only 409, but a step that writes nothing (skip, done,
// failed) taken from a view older than one's own write could be wrong.
//
// Here: the decision up to the image patch. The flow's vocabulary is step.ts, the gate condition
// and its patches gateCondition.ts, the steps after the image patch afterPatch.ts.
import type { V1Pod } from '@kubernetes/client-node';
import { formatDuration } from '../durationText.js';
import { follow } from './afterPatch.js';
import { containerAtTarget } from './atTarget.js';
import { closeGate, gateOwner, keepDrained, openGate, resourceVersionGuard } from './gateCondition.js';
import { changesImage } from './completion.js';
import { drainsFor, podChanges, type PodChanges } from './changes.js';
import { sameImage, sameImageID } from './image.js';
import {
  conditionSinceMs,
  latestInstantMs,
  conditionStatus,
  containerStatus,
  declaresGate,
  isPodReady,
  specContainer,
} from './podView.js';
import { formatResources, resizeQosChange, sameResources, specResources, statusResources } from './resources.js';
import { encodeState, ownedBy, readState, STATE_ANNOTATION, type ContainerRecord, type InPlaceState } from './state.js';
import type { DecideContext, ImagePatch, Step } from './step.js';

export { GATE_CLOSED_REASON, gateMessage, gateOwner } from './gateCondition.js';
export { type DecideContext, type GatePatch, type ImagePatch, type Step } from './step.js';

/**
 * The next step for `pod` (undefined: not found). Pure: the same pod and context always give
 * the same step.
 */
export function decide(pod: V1Pod | undefined, ctx: DecideContext): Step {
  if (pod === undefined) return { kind: 'vanished', reason: 'Gone', message: 'the pod no longer exists' };
  if (ctx.uid !== undefined && pod.metadata?.uid !== ctx.uid) {
    return {
      kind: 'vanished',
      reason: 'Replaced',
      message: `the pod was replaced (uid ${pod.metadata?.uid ?? 'none'}, was ${ctx.uid})`,
    };
  }
  if (pod.metadata?.deletionTimestamp)
    return { kind: 'vanished', reason: 'Terminating', message: 'the pod is being deleted' };

  const st = readState(pod);
  const step =
    st.kind === 'ok' && isOwn(st.state, ctx)
      ? follow(pod, st.state, ctx)
      : ctx.direction === 'upgrade' &&
          st.kind === 'ok' &&
          ownedBy(st.state, ctx.plan, ctx.revision) &&
          st.state.direction === 'rollback'
        ? resumeOwnRollback(pod, st.state, ctx)
        : ctx.direction === 'upgrade'
          ? startUpgrade(pod, ctx)
          : startRollback(pod, ctx);
  return step.kind === 'failed' && !step.state?.inService ? keepDrained(pod, ctx, step) : step;
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
  if (declaresGate(pod, ctx.gate.conditionType) && conditionStatus(pod, ctx.gate.conditionType) === 'True')
    return startUpgrade(pod, ctx);
  const step = follow(pod, state, { ...ctx, direction: 'rollback' });
  if (step.kind === 'wait-complete' || step.kind === 'failed' || step.kind === 'resize') return step;
  return startUpgrade(pod, ctx);
}

// ---------------------------------------------------------------------------------------------
// Before the image patch: upgrade.

function startUpgrade(pod: V1Pod, ctx: DecideContext): Step {
  const missing = ctx.containers.filter((c) => specContainer(pod, c.name) === undefined).map((c) => c.name);
  if (missing.length > 0) {
    return {
      kind: 'refused',
      reason: 'ContainerMissing',
      message: `the pod has no container named ${missing.join(', ')}`,
    };
  }
  const gateType = ctx.gate.conditionType;
  const gated = declaresGate(pod, gateType);
  const atTarget = ctx.containers.every((c) => containerAtTarget(pod, c));
  const changes = podChanges(pod, ctx.containers);
  const nothingToChange = changes.images.length === 0 && changes.resizes.length === 0;

  if (gated && conditionStatus(pod, gateType) === 'False') {
    const foreign = heldByOther(pod, ctx);
    if (foreign) return foreign;
    // Drained by this flow (or by nobody we know of) and not yet patched.
    if (atTarget) return openGate(pod, ctx, 'already at the target; reopening the gate');
    if (nothingToChange) return updatingElsewhere();
    return refusedResize(pod, ctx) ?? drainThenPatch(pod, ctx, () => upgradePatch(pod, ctx, changes, false));
  }

  if (atTarget) return { kind: 'skipped', reason: 'AtTarget', message: 'already at the target' };
  if (!gated && ctx.gate.required) {
    return {
      kind: 'refused',
      reason: 'GateMissing',
      message: `the pod does not declare the readiness gate ${gateType} in spec.readinessGates`,
    };
  }
  if (nothingToChange) return updatingElsewhere();
  const refused = refusedResize(pod, ctx);
  if (refused) return refused;
  const drains = drainsFor(changes, ctx.drain);
  if (!gated || !drains) return upgradePatch(pod, ctx, changes, !drains);
  return closeGate(pod, ctx);
}

/** A resize the API server would refuse for this pod: one that changes its QoS class. */
function refusedResize(pod: V1Pod, ctx: DecideContext): Step | undefined {
  const change = resizeQosChange({ update: { containers: ctx.containers } }, pod);
  if (!change) return undefined;
  return {
    kind: 'refused',
    reason: 'QosChange',
    message: `the resize would change the pod's QoS class from ${change.from} to ${change.to}, which Kubernetes does not allow`,
  };
}

function updatingElsewhere(): Step {
  return {
    kind: 'foreign',
    reason: 'UpdatingElsewhere',
    message:
      'the spec already names the target but not every container runs it: something else is updating the pod, or the change fails',
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
    return {
      kind: 'foreign',
      reason: 'MalformedState',
      message: `the gate is closed and ${STATE_ANNOTATION} is unreadable: ${st.error}`,
    };
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

/** The container as it is now: what a record starts from (its image kept unless the flow changes it). */
function currentRecord(pod: V1Pod, name: string): ContainerRecord {
  const cs = containerStatus(pod, name);
  const image = specContainer(pod, name)?.image ?? '';
  return {
    fromImage: image,
    fromImageID: cs?.imageID ?? '',
    fromContainerID: cs?.containerID ?? '',
    fromRestartCount: cs?.restartCount ?? 0,
    toImage: image,
  };
}

function upgradePatch(pod: V1Pod, ctx: DecideContext, changes: PodChanges, inService: boolean): Step {
  const containers: Record<string, ContainerRecord> = {};
  for (const c of changes.images) containers[c.name] = { ...currentRecord(pod, c.name), toImage: c.image };
  for (const r of changes.resizes)
    containers[r.name] = {
      ...(containers[r.name] ?? currentRecord(pod, r.name)),
      fromResources: r.from,
      toResources: r.to,
    };
  return imagePatch(pod, ctx, containers, inService);
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
    return { kind: 'skipped', reason: 'NothingToRollBack', message: 'this revision of the plan never patched the pod' };
  }

  const back = Object.entries(upgrade.containers).every(([name, rec]) => isBack(pod, name, rec));
  if (back) {
    if (gated && conditionStatus(pod, gateType) !== 'True')
      return openGate(pod, ctx, 'already back on the recorded images and resources; reopening the gate');
    return { kind: 'skipped', reason: 'AtTarget', message: 'already back on the recorded images and resources' };
  }
  const inService = !rollbackDrains(pod, ctx, upgrade);
  const build = () => rollbackPatch(pod, ctx, upgrade, inService);
  if (!gated) return build();
  if (!gateFalse) return inService ? build() : closeGate(pod, ctx);
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

/**
 * A container already back where the upgrade found it: its pre-upgrade image running again (spec
 * and image ID), and its recorded resources asked for and reported by the kubelet.
 */
function isBack(pod: V1Pod, name: string, rec: ContainerRecord): boolean {
  const cs = containerStatus(pod, name);
  if (!sameImage(specContainer(pod, name)?.image ?? '', rec.fromImage) || !cs?.state?.running) return false;
  if (rec.fromResources !== undefined) {
    const actual = statusResources(pod, name);
    if (!sameResources(specResources(pod, name), rec.fromResources) || actual === undefined) return false;
    if (!sameResources(actual, rec.fromResources)) return false;
  }
  if (!changesImage(rec)) return true;
  return rec.fromImageID !== ''
    ? sameImageID(cs.imageID ?? '', rec.fromImageID)
    : sameImage(cs.image ?? '', rec.fromImage);
}

/** The changes that take the pod back to the upgrade's record: its old images, and its old resources. */
function rollbackChanges(pod: V1Pod, upgrade: InPlaceState): PodChanges {
  const containers = Object.entries(upgrade.containers).map(([name, up]) => ({
    name,
    ...(changesImage(up) ? { image: up.fromImage } : {}),
    ...(up.fromResources ? { resources: up.fromResources } : {}),
  }));
  return podChanges(pod, containers);
}

/** Whether the rollback drains the pod, by the same rule as the upgrade (`strategy.drain`). */
function rollbackDrains(pod: V1Pod, ctx: DecideContext, upgrade: InPlaceState): boolean {
  return drainsFor(rollbackChanges(pod, upgrade), ctx.drain);
}

function rollbackPatch(pod: V1Pod, ctx: DecideContext, upgrade: InPlaceState, inService: boolean): Step {
  const containers: Record<string, ContainerRecord> = {};
  for (const [name, up] of Object.entries(upgrade.containers)) {
    const rec = currentRecord(pod, name);
    if (changesImage(up)) {
      rec.toImage = up.fromImage;
      if (up.fromImageID !== '') rec.toImageID = up.fromImageID;
      if (up.fromContainerID !== '') rec.originContainerID = up.fromContainerID;
    }
    if (up.fromResources !== undefined) {
      rec.fromResources = specResources(pod, name);
      rec.toResources = up.fromResources;
    }
    containers[name] = rec;
  }
  return imagePatch(pod, ctx, containers, inService);
}

// ---------------------------------------------------------------------------------------------
// Shared steps.

function drainThenPatch(pod: V1Pod, ctx: DecideContext, patch: () => Step): Step {
  const gateType = ctx.gate.conditionType;
  // Unknown closing time (a condition written without one): count the drain as served.
  const closedSince = conditionSinceMs(pod, gateType);
  const closedAt = closedSince ?? ctx.nowMs - ctx.drainMs;
  if (isPodReady(pod)) {
    // The kubelet has not yet turned the pod not Ready; if it never does (node gone), give up —
    // a whole podTimeout after the end of the stored second, not up to a second early.
    const giveUpAt = (closedSince !== undefined ? latestInstantMs(closedSince) : closedAt) + ctx.podTimeoutMs;
    if (ctx.nowMs >= giveUpAt) {
      return {
        kind: 'failed',
        reason: 'DrainTimeout',
        message: `the pod stayed Ready for ${formatDuration(ctx.podTimeoutMs)} after its gate was closed`,
      };
    }
    return {
      kind: 'wait-drain',
      reason: 'StillReady',
      retryAfterMs: giveUpAt - ctx.nowMs,
      message: 'gate closed; waiting for the pod to turn not Ready',
    };
  }
  // Seen turning not Ready by this run, which closed the gate: the drain counts from that sight.
  // Otherwise a drain of 0 waits for nothing, and any other counts from the end of the stored second.
  const leftMs =
    ctx.notReadySeenForMs !== undefined
      ? ctx.drainMs - ctx.notReadySeenForMs
      : (ctx.drainMs > 0 && closedSince !== undefined ? latestInstantMs(closedSince) : closedAt) +
        ctx.drainMs -
        ctx.nowMs;
  if (leftMs > 0) {
    return {
      kind: 'wait-drain',
      reason: 'Draining',
      retryAfterMs: leftMs,
      message: `draining for ${formatDuration(leftMs)} more`,
    };
  }
  return patch();
}

/**
 * The patch of `pods/{name}`: the state annotation, with the new images of the containers whose
 * image changes (none for a resize only: then the annotation alone, and the resize follows).
 */
function imagePatch(
  pod: V1Pod,
  ctx: DecideContext,
  containers: Record<string, ContainerRecord>,
  inService: boolean,
): Step {
  const state: InPlaceState = {
    plan: ctx.plan,
    revision: ctx.revision,
    wave: ctx.wave,
    startedAt: new Date(ctx.nowMs).toISOString(),
    direction: ctx.direction,
    containers,
    ...(inService ? { inService: true } : {}),
  };
  const names = Object.keys(containers).sort();
  const newImages = names
    .filter((name) => changesImage(containers[name] as ContainerRecord))
    .map((name) => ({ name, image: (containers[name] as ContainerRecord).toImage }));
  const body: ImagePatch = {
    metadata: { ...resourceVersionGuard(pod), annotations: { [STATE_ANNOTATION]: encodeState(state) } },
    ...(newImages.length > 0 ? { spec: { containers: newImages } } : {}),
  };
  const what = names
    .map((n) => {
      const rec = containers[n] as ContainerRecord;
      const parts = [
        ...(changesImage(rec) ? [rec.toImage] : []),
        ...(rec.toResources ? [formatResources(rec.toResources)] : []),
      ];
      return `${n}=${parts.join(' + ')}`;
    })
    .join(', ');
  return { kind: 'patch', body, state, message: `${ctx.direction === 'upgrade' ? 'setting' : 'restoring'} ${what}` };
}
