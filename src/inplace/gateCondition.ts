// The readiness-gate condition as kwave writes it: its reasons, the message that names the flow
// that closed it (and reading that name back), and the flow's gate patches (all built by
// cluster/requestBodies.ts conditionPatchBody). Pure.
import type { V1Pod } from '@kubernetes/client-node';
import { gateNotReadyMessage, READINESS_GATES_NOT_READY } from '../kubeletReadiness.js';
import { conditionPatchBody, type ConditionPatchBody, type PodConditionPatch } from '../cluster/requestBodies.js';
import { conditionStatus, declaresGate, isPodReady, podCondition } from './podView.js';
import type { Direction } from './state.js';
import type { DecideContext, GatePatch, Step } from './step.js';

/** Reason on the gate condition while kwave holds a pod out of service. */
export const GATE_CLOSED_REASON = 'InPlaceUpdate';
/** Reason on the gate condition when kwave puts the pod back in service. */
export const GATE_OPEN_REASON = 'InPlaceUpdateComplete';

/** The message kwave puts on the gate condition; it names the flow that closed the gate. */
export function gateMessage(direction: Direction, plan: string, revision: string, complete = false): string {
  return `kwave: ${direction} by plan ${plan} (revision ${revision})${complete ? ' complete' : ''}`;
}

const GATE_OWNER = /^kwave: (upgrade|rollback) by plan (\S+) \(revision (\S+)\)$/;

/** Which kwave flow closed the pod's gate, read back from the condition; undefined if not kwave. */
export function gateOwner(
  pod: V1Pod,
  conditionType: string,
): { direction: Direction; plan: string; revision: string } | undefined {
  const c = podCondition(pod, conditionType);
  if (c?.status !== 'False' || c.reason !== GATE_CLOSED_REASON) return undefined;
  const m = GATE_OWNER.exec(c.message ?? '');
  if (!m) return undefined;
  return { direction: m[1] as Direction, plan: m[2] as string, revision: m[3] as string };
}

/** A failed step with the patch that closes the gate again, when it is open; see `reclose` (unguarded). */
export function keepDrained(pod: V1Pod, ctx: DecideContext, step: Extract<Step, { kind: 'failed' }>): Step {
  const type = ctx.gate.conditionType;
  if (!declaresGate(pod, type) || conditionStatus(pod, type) === 'False') return step;
  return { ...step, reclose: conditionPatchBody(closing(pod, closedGate(ctx), true), new Date(ctx.nowMs)) };
}

function closedGate(ctx: DecideContext): PodConditionPatch {
  return {
    type: ctx.gate.conditionType,
    status: 'False',
    reason: GATE_CLOSED_REASON,
    message: gateMessage(ctx.direction, ctx.plan, ctx.revision),
  };
}

/**
 * The conditions a gate closing writes: the gate, and, when the pod is Ready, Ready False by the
 * kubelet's own rule (a gate not True), so that endpoints drop the pod on this write instead of
 * after the kubelet's next sync of the pod (seconds on a busy node). The kubelet never derives
 * anything else from a closed gate; Ready True stays the kubelet's to write.
 *
 * The message decides what the kubelet does next. Its status cache still says Ready True, and its
 * status sync (every 10 s) writes that cache back over a status that differs from it, unless the
 * pod was synced in between. A Ready message other than the one the kubelet would write makes it
 * sync the pod at once (and write its own message): kwave's message, for a drain, which must not
 * be undone. With no drain the image patch follows at once and syncs the pod anyway; there the
 * kubelet's own message leaves it nothing to write, so no write of its lands between kwave's two.
 */
function closing(pod: V1Pod, gate: PodConditionPatch, drains: boolean): PodConditionPatch[] {
  if (!isPodReady(pod)) return [gate];
  const notReady: PodConditionPatch = {
    type: 'Ready',
    status: 'False',
    reason: READINESS_GATES_NOT_READY,
    message: drains ? `kwave closed the readiness gate "${gate.type}"` : gateNotReadyMessage(gate.type, 'False'),
  };
  return [gate, notReady];
}

/**
 * The gate patch that puts a pod back in service after its image patch was refused (403, 422:
 * nothing changed, it still runs its old images); undefined when its gate is not closed. Unguarded
 * (no resourceVersion), as the re-close: the refusal is the last word on this flow.
 */
export function reopenAfterRefusal(
  pod: V1Pod,
  ctx: Pick<DecideContext, 'gate'>,
  nowMs: number,
): ConditionPatchBody | undefined {
  const type = ctx.gate.conditionType;
  if (!declaresGate(pod, type) || conditionStatus(pod, type) === 'True') return undefined;
  return conditionPatchBody(
    [
      {
        type,
        status: 'True',
        reason: GATE_OPEN_REASON,
        message: 'image patch refused; back in service on its old images',
      },
    ],
    new Date(nowMs),
  );
}

export function closeGate(pod: V1Pod, ctx: DecideContext): Step {
  return {
    kind: 'close-gate',
    body: gatePatch(pod, ctx, closing(pod, closedGate(ctx), ctx.drainMs > 0)),
    message: `closing the gate ${ctx.gate.conditionType}`,
  };
}

export function openGate(pod: V1Pod, ctx: DecideContext, message: string): Step {
  const gate: PodConditionPatch = {
    type: ctx.gate.conditionType,
    status: 'True',
    reason: GATE_OPEN_REASON,
    message: gateMessage(ctx.direction, ctx.plan, ctx.revision, true),
  };
  return { kind: 'open-gate', body: gatePatch(pod, ctx, [gate]), message };
}

/**
 * The flow's guarded gate patch. Like the image patch it carries the resourceVersion this decision
 * saw: a pod that changed since answers 409 and is
 * decided again, so not even a gate write lands on a pod the decision did not see.
 */
function gatePatch(pod: V1Pod, ctx: DecideContext, conditions: readonly PodConditionPatch[]): GatePatch {
  return conditionPatchBody(conditions, new Date(ctx.nowMs), resourceVersionGuard(pod));
}

/** The resourceVersion an observation saw, for a write that must not land on a pod changed since. */
export function resourceVersionGuard(pod: V1Pod): { resourceVersion?: string } {
  const v = pod.metadata?.resourceVersion;
  return v === undefined ? {} : { resourceVersion: v };
}
