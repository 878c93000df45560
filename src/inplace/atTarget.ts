// Whether one pod already runs what the plan wants: per container, and for the whole pod. Pure.
// The per-pod decision (decide.ts) and the fleet selection (rollout/select.ts) share this rule.
import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerUpdate, Plan } from '../plan/types.js';
import { digestOf, sameImage } from './image.js';
import { conditionStatus, containerStatus, specContainer } from './podView.js';
import { applyTarget, sameResources, specResources, statusResources } from './resources.js';

/**
 * Whether a container runs `target`: it is running, and
 * - for a target image: its spec names it, its status reports it (and, for a digest-pinned
 *   target, that digest in `imageID`). A container whose spec already names the target but whose
 *   kubelet has not restarted it still reports the old image in its status: not at target;
 * - for target resources: its spec asks for them and the kubelet reports them
 *   (`status.containerStatuses[].resources`).
 */
export function containerAtTarget(pod: V1Pod, update: ContainerUpdate): boolean {
  const spec = specContainer(pod, update.name);
  const status = containerStatus(pod, update.name);
  if (spec === undefined || status === undefined || !status.state?.running) return false;
  if (update.image !== undefined) {
    if (spec.image === undefined || !sameImage(spec.image, update.image)) return false;
    const pinned = digestOf(update.image);
    if (pinned !== undefined ? digestOf(status.imageID ?? '') !== pinned : !sameImage(status.image ?? '', update.image))
      return false;
  }
  if (update.resources !== undefined) {
    const asked = specResources(pod, update.name);
    const wanted = applyTarget(asked, update.resources);
    const actual = statusResources(pod, update.name);
    if (!sameResources(asked, wanted) || actual === undefined || !sameResources(actual, wanted)) return false;
  }
  return true;
}

/**
 * Whether a pod is already where the plan wants it, so it is skipped (and counts toward the wave
 * targets): every updated container is at its target (`containerAtTarget`) and the pod is not
 * held out of service by the gate (`False`). A pod at the target images whose gate is still
 * False is mid-flight (a run stopped between completion and reopening the gate): it is not done
 * until the gate opens, so it stays on the to-do list, where the flow reopens it.
 */
export function isAtTarget(pod: V1Pod, plan: Pick<Plan, 'update' | 'readinessGate'>): boolean {
  if (conditionStatus(pod, plan.readinessGate.conditionType) === 'False') return false;
  return plan.update.containers.every((c) => containerAtTarget(pod, c));
}
