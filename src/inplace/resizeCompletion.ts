// The completion rule of a resize (docs/rollout.md, "Resize"): has the kubelet really given the
// container the target CPU and memory? The kubelet's own word, never the spec: its
// `PodResizePending` and `PodResizeInProgress` conditions gone, `status.containerStatuses[].resources`
// equal to the target, and — where the server tracks it — a status observed at the pod's current
// generation — and what the API server's refusal of a resize means. Pure.
import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerCompletion } from './completion.js';
import { containerStatus, podCondition } from './podView.js';
import { formatResources, sameResources, statusResources, type Resources } from './resources.js';

/** The pod conditions the kubelet reports while a resize is not done (Kubernetes 1.33+). */
const RESIZE_PENDING = 'PodResizePending';
const RESIZE_IN_PROGRESS = 'PodResizeInProgress';

/**
 * Where one container's resize to `target` stands.
 *
 * Failed (`ResizeInfeasible`, the kubelet's message) when the kubelet says the node can never hold
 * it (`PodResizePending`, reason `Infeasible`) while the container still reports other
 * resources. `Deferred` (the node is full now; the kubelet retries) is waiting, reason
 * `ResizeDeferred`, and fails only when podTimeout runs out (afterPatch.ts). A pending condition
 * seen while the container already reports the target is one the kubelet has not cleared yet
 * (a rollback of a refused resize meets the upgrade's): waiting, not failed.
 */
export function resizeCompletion(pod: V1Pod, name: string, target: Resources): ContainerCompletion {
  const waiting = (reason: string, message: string): ContainerCompletion => ({
    name,
    status: 'waiting',
    reason,
    message,
  });
  const actual = statusResources(pod, name);
  const atTarget = actual !== undefined && sameResources(actual, target);
  const pending = podCondition(pod, RESIZE_PENDING);
  if (pending?.status === 'True') {
    const message = pending.message ?? pending.reason ?? 'the resize is pending';
    if (pending.reason === 'Infeasible' && !atTarget)
      return { name, status: 'failed', reason: 'ResizeInfeasible', message };
    return waiting(pending.reason === 'Deferred' ? 'ResizeDeferred' : 'ResizePending', message);
  }
  const inProgress = podCondition(pod, RESIZE_IN_PROGRESS);
  if (inProgress?.status === 'True')
    return waiting('ResizeInProgress', inProgress.message ?? 'the kubelet is resizing the container');
  if (actual === undefined) return waiting('NoResources', 'the kubelet reports no resources for this container');
  if (!atTarget)
    return waiting('NotResized', `the kubelet reports ${formatResources(actual)}, not yet ${formatResources(target)}`);
  const generation = pod.metadata?.generation;
  const observed = pod.status?.observedGeneration;
  if (generation !== undefined && observed !== undefined && observed < generation)
    return waiting('StaleStatus', `the status is of generation ${observed}, the pod is at ${generation}`);
  const cs = containerStatus(pod, name);
  if (!cs?.state?.running) return waiting('NotRunning', 'the resized container is not running');
  if (!cs.ready) return waiting('NotReady', 'the resized container runs but is not ready');
  return { name, status: 'done' };
}

/**
 * The `details.causes` reasons with which the API server's admission (PodResizeValidator, on by
 * default where `pods/resize` is GA: 1.37 has it, 1.33 not) refuses a resize that the node can
 * never hold: requests above its allocatable (`NodeCapacity`), or a node whose OS resizes nothing
 * (`UnsupportedPlatform`). Where that check is not in the server, the kubelet gives the same
 * verdict as `PodResizePending` reason `Infeasible`; both are one outcome.
 */
const INFEASIBLE_CAUSES: ReadonlySet<string> = new Set(['NodeCapacity', 'UnsupportedPlatform']);

/** How a refused resize ends the pod, from the server's answer (a `Status` as KubeError holds it). */
export function resizeRefusal(refusal: { code: number; causes: readonly string[]; message: string }): {
  reason: 'ResizeInfeasible' | 'ResizeRefused';
  message: string;
} {
  const infeasible = refusal.code === 403 && refusal.causes.some((c) => INFEASIBLE_CAUSES.has(c));
  return {
    reason: infeasible ? 'ResizeInfeasible' : 'ResizeRefused',
    message: `the resize was refused (HTTP ${refusal.code}): ${refusal.message}`,
  };
}
