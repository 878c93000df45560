// The bodies of kwave's writes, built from a decision and nothing else: minimal patches, never a
// cached object read, modified and written back (which would overwrite fields others changed).

type ConditionStatus = 'True' | 'False' | 'Unknown';

/** One pod condition, as kwave writes it on `pods/status`. */
export interface PodConditionPatch {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  /** When the status changed; defaults to the time of the request. */
  lastTransitionTime?: Date;
}

/** RFC 3339 with seconds precision, as the API server writes metav1.Time. */
export function formatTime(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** One condition as the body of a `pods/status` patch carries it. */
interface ConditionOnWire {
  type: string;
  status: ConditionStatus;
  lastTransitionTime: string;
  reason?: string;
  message?: string;
}

/** A `pods/status` patch that sets conditions by type; `metadata.resourceVersion` when guarded. */
export interface ConditionPatchBody {
  metadata?: { resourceVersion?: string };
  status: { conditions: ConditionOnWire[] };
}

/** A guarded one: built with the resourceVersion a decision saw (or `{}` when the pod had none). */
export type GuardedConditionPatchBody = ConditionPatchBody & { metadata: { resourceVersion?: string } };

/**
 * The one builder of kwave's condition patches (`pods/status`, strategic merge):
 * `status.conditions` is merged by `type`, so the patch touches exactly the conditions it names
 * and leaves the others alone. The time is written in whole seconds, which is
 * all a `metav1.Time` keeps (the server would drop a fraction).
 *
 * Without `guard` the body carries no resourceVersion: the result is the same whatever the pod's
 * state, so it is sent unconditionally (`kwave adopt`'s Cluster.patchPodCondition; the flow's
 * re-close of a failed pod and its reopening after a refused image patch). With `guard` (the
 * in-place flow's close-gate and open-gate, gateCondition.ts) it carries the resourceVersion the
 * decision saw, and the server answers 409 if the pod changed since.
 */
export function conditionPatchBody(conditions: readonly PodConditionPatch[], now: Date): ConditionPatchBody;
export function conditionPatchBody(
  conditions: readonly PodConditionPatch[],
  now: Date,
  guard: { resourceVersion?: string },
): GuardedConditionPatchBody;
export function conditionPatchBody(
  conditions: readonly PodConditionPatch[],
  now: Date,
  guard?: { resourceVersion?: string },
): ConditionPatchBody {
  const status = { conditions: conditions.map((condition) => conditionOnWire(condition, now)) };
  return guard ? { metadata: { ...guard }, status } : { status };
}

function conditionOnWire(condition: PodConditionPatch, now: Date): ConditionOnWire {
  const c: ConditionOnWire = {
    type: condition.type,
    status: condition.status,
    lastTransitionTime: formatTime(condition.lastTransitionTime ?? now),
  };
  if (condition.reason !== undefined) c.reason = condition.reason;
  if (condition.message !== undefined) c.message = condition.message;
  return c;
}

/** The object an Event is about. */
interface InvolvedObject {
  apiVersion?: string;
  kind: string;
  name: string;
  namespace: string;
  uid?: string;
  resourceVersion?: string;
}

export interface EventSpec {
  involvedObject: InvolvedObject;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** Shown as `source.component` / `reportingComponent`; default `kwave`. */
  component?: string;
}

/** Event names as the client-go recorder makes them: `<object>.<time in hex nanoseconds>`. */
export function eventName(objectName: string, now: Date, uniquifier = 0): string {
  const nanos = BigInt(now.getTime()) * 1_000_000n + BigInt(uniquifier % 1_000_000);
  return `${objectName}.${nanos.toString(16)}`;
}

/** A core/v1 Event (the kind `kubectl describe` and `kubectl get events` show). */
export function eventBody(spec: EventSpec, now: Date, uniquifier = 0): Record<string, unknown> {
  const component = spec.component ?? 'kwave';
  const at = formatTime(now);
  const involved: Record<string, unknown> = {
    kind: spec.involvedObject.kind,
    name: spec.involvedObject.name,
    namespace: spec.involvedObject.namespace,
  };
  for (const k of ['apiVersion', 'uid', 'resourceVersion'] as const) {
    if (spec.involvedObject[k] !== undefined) involved[k] = spec.involvedObject[k];
  }
  // events.k8s.io/v1 caps a note at 1024 characters; stay under it so any Event API accepts ours.
  const message = spec.message.length > 1024 ? spec.message.slice(0, 1021) + '...' : spec.message;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(spec.involvedObject.name, now, uniquifier), namespace: spec.involvedObject.namespace },
    involvedObject: involved,
    reason: spec.reason,
    message,
    type: spec.type,
    source: { component },
    reportingComponent: component,
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  };
}
