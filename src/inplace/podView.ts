// Read-only views of a V1Pod: the few facts the in-place flow asks of a pod, in one place.
// Works on pods from the typed client (Date fields) and from raw watch JSON (string times).
import type { V1Container, V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';

/** A pod named apart from its object (a selected pod, a flow's reference). */
export interface PodName {
  namespace: string;
  name: string;
}

/** `namespace/name`: how kwave names a pod in events, records and messages. */
export function podKey(pod: V1Pod | PodName): string {
  if ('name' in pod && typeof pod.name === 'string') return `${pod.namespace}/${pod.name}`;
  const md = (pod as V1Pod).metadata;
  return `${md?.namespace ?? ''}/${md?.name ?? ''}`;
}

/** Milliseconds since the epoch of an API time, whichever way it was decoded. */
export function toMs(time: Date | string | undefined | null): number | undefined {
  if (time === undefined || time === null) return undefined;
  const ms = time instanceof Date ? time.getTime() : Date.parse(time);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The latest instant an API time can stand for. The server keeps metav1.Time (a condition's
 * lastTransitionTime, a container's startedAt) in whole seconds, cutting the fraction: a stored
 * `…:07Z` happened somewhere in [07.000, 08.000). A duration that must have passed since then
 * (drainSeconds, minReadySeconds) is counted from the end of that second, or it comes out up to a
 * second short on a real cluster. A time with a fraction was not cut and is taken as it is.
 */
export function latestInstantMs(ms: number): number {
  return ms % 1000 === 0 ? ms + 1000 : ms;
}

// The three lookups below run several times for every version of every pod in flight: plain
// loops, not `find` with a closure made per call.

export function specContainer(pod: V1Pod, name: string): V1Container | undefined {
  const list = pod.spec?.containers;
  if (list) for (const c of list) if (c.name === name) return c;
  return undefined;
}

export function containerStatus(pod: V1Pod, name: string): V1ContainerStatus | undefined {
  const list = pod.status?.containerStatuses;
  if (list) for (const c of list) if (c.name === name) return c;
  return undefined;
}

export function podCondition(pod: V1Pod, type: string): V1PodCondition | undefined {
  const list = pod.status?.conditions;
  if (list) for (const c of list) if (c.type === type) return c;
  return undefined;
}

/** `'True' | 'False' | 'Unknown'`, or `undefined` when the pod has no such condition. */
export function conditionStatus(pod: V1Pod, type: string): string | undefined {
  return podCondition(pod, type)?.status;
}

/** When the condition last changed status, in ms; undefined if unknown. */
export function conditionSinceMs(pod: V1Pod, type: string): number | undefined {
  return toMs(podCondition(pod, type)?.lastTransitionTime as Date | string | undefined);
}

export function isPodReady(pod: V1Pod): boolean {
  return conditionStatus(pod, 'Ready') === 'True';
}

export function declaresGate(pod: V1Pod, conditionType: string): boolean {
  return (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === conditionType);
}

export function annotation(pod: V1Pod, key: string): string | undefined {
  return pod.metadata?.annotations?.[key];
}
