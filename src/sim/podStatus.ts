// Pure functions from what the kubelet knows about a pod's containers to the pod's status: its
// conditions (with lastTransitionTime kept unless the status flips), its phase, and Ready as the
// kubelet derives it: containers ready AND every readiness-gate condition True.
import { gateNotReadyMessage, READINESS_GATES_NOT_READY } from '../kubeletReadiness.js';
import { sameMembers } from '../sameMembers.js';

interface WaitingState {
  reason: string;
  message?: string;
}
interface RunningState {
  startedAt: string;
}
interface TerminatedState {
  exitCode: number;
  reason: string;
  message?: string;
  startedAt: string;
  finishedAt: string;
  containerID?: string;
}
interface ContainerState {
  waiting?: WaitingState;
  running?: RunningState;
  terminated?: TerminatedState;
}

/** A container's status as core/v1 ContainerStatus has it (the fields the simulation fills). */
export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started: boolean;
  /** What the running container has (in-place resize, Kubernetes 1.33); the admitted resources when it does not run. */
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  /** The requests the kubelet admitted. */
  allocatedResources?: Record<string, string>;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface PodCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  [key: string]: unknown;
}

/** A condition as computed, before its lastTransitionTime is settled. */
interface ConditionValue {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
}

/** The condition types the kubelet owns, in the order it writes them (after any custom ones). */
export const KUBELET_CONDITIONS = [
  'PodReadyToStartContainers',
  'Initialized',
  'Ready',
  'ContainersReady',
  'PodScheduled',
] as const;
/** The resize conditions (Kubernetes 1.33), written by the kubelet before its others while a resize is not done. */
export const RESIZE_CONDITIONS = ['PodResizePending', 'PodResizeInProgress'] as const;
const KUBELET_OWNED = new Set<string>([...KUBELET_CONDITIONS, ...RESIZE_CONDITIONS]);

/** ContainersReady: True when every container of the spec reports ready. */
function containersReady(specNames: readonly string[], statuses: readonly ContainerStatus[]): ConditionValue {
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const unknown = specNames.filter((n) => !byName.has(n));
  const unready = specNames.filter((n) => byName.has(n) && !byName.get(n)!.ready);
  if (unknown.length === 0 && unready.length === 0) return { type: 'ContainersReady', status: 'True' };
  const parts: string[] = [];
  if (unknown.length) parts.push(`containers with unknown status: [${unknown.join(' ')}]`);
  if (unready.length) parts.push(`containers with unready status: [${unready.join(' ')}]`);
  return { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: parts.join(', ') };
}

/**
 * Ready: a copy of ContainersReady while that is not True; otherwise True only if every
 * readiness gate's condition exists and is True, else False with `ReadinessGatesNotReady`.
 */
function readyCondition(
  containers: ConditionValue,
  gates: readonly string[],
  conditions: readonly PodCondition[],
): ConditionValue {
  if (containers.status !== 'True') return { ...containers, type: 'Ready' };
  const problems: string[] = [];
  for (const gate of gates) {
    const status = conditions.find((x) => x.type === gate)?.status;
    if (status !== 'True') problems.push(gateNotReadyMessage(gate, status));
  }
  if (problems.length === 0) return { type: 'Ready', status: 'True' };
  return { type: 'Ready', status: 'False', reason: READINESS_GATES_NOT_READY, message: problems.join(', ') };
}

/** Gives each computed condition its lastTransitionTime: kept from `previous` unless the status changed. */
function settle(value: ConditionValue, previous: readonly PodCondition[], now: string): PodCondition {
  const prev = previous.find((c) => c.type === value.type);
  const out: PodCondition = { type: value.type, status: value.status, lastProbeTime: null };
  out.lastTransitionTime =
    prev && prev.status === value.status && prev.lastTransitionTime ? prev.lastTransitionTime : now;
  if (value.reason) out.reason = value.reason;
  if (value.message) out.message = value.message;
  return out;
}

export interface ConditionInputs {
  specNames: readonly string[];
  statuses: readonly ContainerStatus[];
  gates: readonly string[];
  /** The pod sandbox exists and has its network (false once the pod is torn down). */
  sandboxReady: boolean;
  /** Phase Succeeded or Failed: Ready and ContainersReady turn False with reason PodCompleted, as the kubelet reports a finished pod. */
  completed?: boolean;
  /** The resize conditions now (PodResizePending with its reason and message, PodResizeInProgress); absent ones are dropped. */
  resize?: readonly ConditionValue[];
}

/**
 * The pod's conditions: the ones others set (readiness gates, DisruptionTarget …) first and
 * untouched, then the kubelet's own in the order it writes them.
 */
export function podConditions(
  previous: readonly PodCondition[],
  inputs: ConditionInputs,
  now: string,
): readonly PodCondition[] {
  const custom = previous.filter((c) => !KUBELET_OWNED.has(c.type));
  const containers: ConditionValue = inputs.completed
    ? { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' }
    : containersReady(inputs.specNames, inputs.statuses);
  const values: ConditionValue[] = [
    { type: 'PodReadyToStartContainers', status: inputs.sandboxReady ? 'True' : 'False' },
    { type: 'Initialized', status: 'True' },
    inputs.completed
      ? { type: 'Ready', status: 'False', reason: 'PodCompleted' }
      : readyCondition(containers, inputs.gates, previous),
    containers,
    { type: 'PodScheduled', status: 'True' },
  ];
  // A resize condition's time changes with its reason (the kubelet keeps it while the reason stays).
  const resize = (inputs.resize ?? []).map((v) => {
    const prev = previous.find((c) => c.type === v.type);
    const since = prev && prev.reason === v.reason && prev.lastTransitionTime ? prev.lastTransitionTime : now;
    const c: PodCondition = { type: v.type, status: v.status, lastProbeTime: null, lastTransitionTime: since };
    if (v.reason) c.reason = v.reason;
    if (v.message) c.message = v.message;
    return sameAsBefore(c, previous);
  });
  const out = [...custom, ...resize, ...values.map((v) => sameAsBefore(settle(v, previous, now), previous))];
  return out.length === previous.length && out.every((c, i) => c === previous[i]) ? previous : out;
}

/**
 * The condition as it was when nothing about it changed (same members, same order), else the new
 * one: the stored (frozen) condition is kept, so the status written shares it, and what decodes
 * and serialises the status meets it again instead of a copy (most writes change one condition).
 */
function sameAsBefore(next: PodCondition, previous: readonly PodCondition[]): PodCondition {
  const prev = previous.find((c) => c.type === next.type);
  return prev !== undefined && sameMembers(prev, next) ? prev : next;
}

/**
 * The pod's phase: Pending while some container has never run; Running otherwise; once torn
 * down, Succeeded if every container exited 0, else Failed. With restartPolicy Never (or
 * OnFailure, all exits 0) the pod finishes by itself once every container has exited.
 */
export function podPhase(
  statuses: readonly ContainerStatus[],
  terminated: boolean,
  restartPolicy: 'Always' | 'Never' | 'OnFailure' = 'Always',
): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  const allExited0 = statuses.length > 0 && statuses.every((s) => s.state.terminated?.exitCode === 0);
  if (terminated) return allExited0 ? 'Succeeded' : 'Failed';
  if (restartPolicy !== 'Always' && statuses.length > 0 && statuses.every((s) => s.state.terminated)) {
    if (allExited0) return 'Succeeded';
    if (restartPolicy === 'Never') return 'Failed';
  }
  const neverRan = statuses.some((s) => s.state.waiting && !s.lastState.terminated);
  return neverRan ? 'Pending' : 'Running';
}

/** The status of a condition type, or undefined. */
export function conditionStatus(
  conditions: readonly PodCondition[] | undefined,
  type: string,
): ConditionStatus | undefined {
  return conditions?.find((c) => c.type === type)?.status;
}
