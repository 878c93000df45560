// The completion rule (docs/rollout.md, "Per pod", step 3), per container and per pod: has the kubelet really replaced
// the container with the target image, and is it running and ready? Proven by image ID, never by
// the spec (the spec says what was asked, the status says what runs).
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { digestOf, sameImage, sameImageID } from './image.js';
import { containerStatus } from './podView.js';
import { resizeCompletion } from './resizeCompletion.js';
import type { ContainerRecord, InPlaceState } from './state.js';

type CompletionStatus = 'waiting' | 'done' | 'failed';

export interface ContainerCompletion {
  name: string;
  status: CompletionStatus;
  /** For `failed`: the kubelet's waiting reason, `DigestMismatch`; for `waiting`: what it waits on. */
  reason?: string;
  /** For `failed`: the kubelet's own message where it gave one. */
  message?: string;
}

export interface PodCompletion {
  status: CompletionStatus;
  reason?: string;
  message?: string;
  containers: ContainerCompletion[];
}

/**
 * Waiting reasons after which the kubelet will not get the container running without a change
 * of spec (or only after back-off that outlasts any sensible timeout): the upgrade failed.
 */
export const FAILURE_REASONS: ReadonlySet<string> = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  // imagePullPolicy Never and the image is not on the node: no retry will ever fetch it.
  'ErrImageNeverPull',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

const PULL_REASONS: ReadonlySet<string> = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
]);

/**
 * Whether a pull error's message is about `image`: true if it quotes it (as the spec spells it or
 * normalized), false if it quotes only other images, undefined if it quotes no image at all (some
 * runtimes word their errors so).
 */
function namesImage(message: string, image: string): boolean | undefined {
  const quoted = [...message.matchAll(/"([^"\s]+)"/g)]
    .map((m) => m[1] ?? '')
    .filter((q) => /^[\w.\-/:@]+$/.test(q) && /[:@/]/.test(q));
  if (quoted.length === 0) return undefined;
  return quoted.some((q) => q === image || sameImage(q, image));
}

/**
 * Where one container stands against its record.
 *
 * Done when all of:
 * 1. it moved to the new image: its `imageID` differs from `fromImageID`; or, when the new image
 *    has the same digest as the old (a retag), it restarted (`containerID` changed or
 *    `restartCount` rose) and `status.image` reports the target. A rollback record
 *    (`toImageID` set) must instead come back to `toImageID`: by a changed image ID, by a restart
 *    onto the target, or because the original container never stopped;
 * 2. a digest-pinned target's digest is the one in `imageID` (else failed `DigestMismatch`);
 * 3. it is running and ready.
 *
 * Failed when it waits with one of `FAILURE_REASONS` — but only once the status shows the
 * kubelet acted on the patch (restart, new image ID, or the target image reported). Right after
 * the patch the status still describes the old container; if that one was already crash-looping
 * or failing to pull, its reason says nothing about the new image, so it means "waiting".
 *
 * A crashing new container shows `terminated` (or `running`, not ready, with `lastState`) before
 * the kubelet's back-off turns it into `CrashLoopBackOff`: that is "waiting", and the failure is
 * reported when the back-off starts.
 *
 * A container that reports the image of the spec the patch replaced (not the target) proves
 * nothing either way, whatever its image ID: the kubelet was still starting it when the patch came
 * (a pull in progress finishes, the container starts, the next sync kills it). "waiting".
 *
 * `CrashLoopBackOff` fails only once a container of the target has started since the patch (the
 * status names another container or a higher restart count than recorded, and the target image).
 * The kubelet keys its restart back-off by the container's spec hash: restoring a spec that ran in
 * the last minutes, whose container ended seconds ago (a rollback to the image just replaced), it
 * reports `CrashLoopBackOff` before it starts that spec at all, the status still describing the
 * container the patch replaced. That is a pause before a start: "waiting", bounded by podTimeout.
 */
export function containerCompletion(
  name: string,
  cs: V1ContainerStatus | undefined,
  rec: ContainerRecord,
): ContainerCompletion {
  const waitingFor = (reason: string, message: string): ContainerCompletion => ({
    name,
    status: 'waiting',
    reason,
    message,
  });
  if (cs === undefined) return waitingFor('NoStatus', 'the kubelet reports no status for this container yet');

  const imageID = cs.imageID ?? '';
  const containerID = cs.containerID ?? '';
  const targetDigest = digestOf(rec.toImage);
  const reportsTarget =
    sameImage(cs.image ?? '', rec.toImage) || (targetDigest !== undefined && digestOf(imageID) === targetDigest);
  const restarted = containerID !== rec.fromContainerID || cs.restartCount > rec.fromRestartCount;
  // The kubelet ends the sync it is in before it reads a newer spec: a container of the spec the
  // patch replaced, whose pull began before the patch, is still created and started, and killed in
  // the next sync. It reports the replaced spec's image: its image ID proves nothing of the patch.
  const ofReplacedSpec =
    restarted && !reportsTarget && !sameImage(rec.fromImage, rec.toImage) && sameImage(cs.image ?? '', rec.fromImage);
  // With no recorded image ID (the container had never started), a new ID proves nothing unless
  // it is the target's.
  const imageChanged =
    imageID !== '' &&
    !ofReplacedSpec &&
    (rec.fromImageID === '' ? reportsTarget : !sameImageID(imageID, rec.fromImageID));
  const touched = restarted || imageChanged || (reportsTarget && !sameImage(rec.fromImage, rec.toImage));

  const waiting = cs.state?.waiting;
  if (waiting?.reason !== undefined && FAILURE_REASONS.has(waiting.reason)) {
    // A failing pull leaves the old container's image and ID in the status (the kubelet builds
    // the waiting status on the last runtime status), so `touched` cannot tell; the pull error's
    // message names the image it tried. It must be the target: right after a rollback patch the
    // status still shows the broken image's back-off, which is not the rollback's failure.
    const named = PULL_REASONS.has(waiting.reason) ? namesImage(waiting.message ?? '', rec.toImage) : undefined;
    // A back-off while the status still describes the recorded container (killed for the patch, or
    // already backing off before it) is the kubelet pausing before it starts the target.
    const crashedSincePatch = restarted && reportsTarget;
    const ours = waiting.reason === 'CrashLoopBackOff' ? crashedSincePatch : (named ?? touched);
    if (ours) return { name, status: 'failed', reason: waiting.reason, message: waiting.message ?? waiting.reason };
  }

  let moved: boolean;
  if (rec.toImageID !== undefined) {
    const back = imageID !== '' && sameImageID(imageID, rec.toImageID);
    const originStillRuns =
      rec.originContainerID !== undefined && rec.originContainerID !== '' && containerID === rec.originContainerID;
    if (imageChanged && !back && cs.state?.running) {
      return {
        name,
        status: 'failed',
        reason: 'DigestMismatch',
        message: `rolled back to ${rec.toImage}, but it now runs image ${imageID}, not the recorded ${rec.toImageID}`,
      };
    }
    moved = back && (imageChanged || (restarted && reportsTarget) || originStillRuns);
  } else {
    moved = imageChanged || (restarted && reportsTarget);
  }

  if (!moved) {
    if (ofReplacedSpec && cs.state?.running)
      return waitingFor(
        'ReplacedSpecRuns',
        `the kubelet runs a container of ${rec.fromImage}, the spec the patch replaced (it started it before it read the patch)`,
      );
    if (waiting !== undefined)
      return waitingFor(waiting.reason ?? 'Waiting', waiting.message ?? 'the container is waiting to start');
    return waitingFor(
      'NotRestarted',
      `the kubelet has not yet replaced the container (image ID still ${imageID || 'none'})`,
    );
  }
  if (targetDigest !== undefined && imageID !== '' && digestOf(imageID) !== targetDigest) {
    return {
      name,
      status: 'failed',
      reason: 'DigestMismatch',
      message: `target ${rec.toImage} is pinned to ${targetDigest}, but the container runs image ${imageID}`,
    };
  }
  if (!cs.state?.running) {
    if (waiting !== undefined)
      return waitingFor(waiting.reason ?? 'Waiting', waiting.message ?? 'the container is waiting to start');
    const t = cs.state?.terminated;
    if (t !== undefined)
      return waitingFor(
        'Terminated',
        `the new container exited with code ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}`,
      );
    return waitingFor('NotRunning', 'the new container is not running yet');
  }
  if (!cs.ready) {
    const crashes = cs.restartCount - rec.fromRestartCount - 1;
    const last = cs.lastState?.terminated;
    const extra =
      crashes > 0 && last ? `; it restarted ${crashes} time(s) since the patch, last exit code ${last.exitCode}` : '';
    return waitingFor('NotReady', `the new container runs but is not ready${extra}`);
  }
  return { name, status: 'done' };
}

/** Whether a record's flow changes the container's image (else it only resizes it). */
export function changesImage(rec: ContainerRecord): boolean {
  return !sameImage(rec.fromImage, rec.toImage);
}

/** One recorded container: its new image proven first (when it has one), then its resize (resizeCompletion.ts). */
function recordCompletion(pod: V1Pod, name: string, rec: ContainerRecord): ContainerCompletion {
  if (changesImage(rec)) {
    const image = containerCompletion(name, containerStatus(pod, name), rec);
    if (image.status !== 'done' || rec.toResources === undefined) return image;
  }
  return rec.toResources !== undefined
    ? resizeCompletion(pod, name, rec.toResources)
    : { name, status: 'failed', reason: 'MalformedState', message: 'the record changes neither image nor resources' };
}

/**
 * The completion rule over every container the state records. `failed` if any container
 * failed (the first by name), `done` if all are done, else `waiting` (reasons of the waiting
 * ones, named).
 */
export function podCompletion(pod: V1Pod, state: InPlaceState): PodCompletion {
  const containers = Object.keys(state.containers)
    .sort()
    .map((name) => recordCompletion(pod, name, state.containers[name] as ContainerRecord));
  const failed = containers.find((c) => c.status === 'failed');
  if (failed)
    return {
      status: 'failed',
      reason: failed.reason,
      message: `container ${failed.name}: ${failed.message ?? ''}`,
      containers,
    };
  const waiting = containers.filter((c) => c.status === 'waiting');
  if (waiting.length === 0) return { status: 'done', containers };
  return {
    status: 'waiting',
    reason: waiting[0]?.reason,
    message: waiting.map((c) => `container ${c.name}: ${c.message ?? c.reason ?? 'waiting'}`).join('; '),
    containers,
  };
}
