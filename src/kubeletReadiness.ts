// The kubelet's Ready condition for a pod whose containers are ready but whose readiness gates are
// not all True, word for word: its reason, and one message part per such gate (joined with ", ").
// The simulated kubelet writes them; kwave writes the same for a gate it closes when the kubelet
// must find nothing of its own to write (src/inplace/gateCondition.ts). Pure.

export const READINESS_GATES_NOT_READY = 'ReadinessGatesNotReady';

/** The message part for gate `type` whose condition has `status` (undefined: the pod has none). */
export function gateNotReadyMessage(type: string, status: string | undefined): string {
  return status === undefined
    ? `corresponding condition of pod readiness gate "${type}" does not exist.`
    : `the status of pod readiness gate "${type}" is not "True", but ${status}`;
}
