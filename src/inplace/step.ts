// The vocabulary of the per-pod flow (decide.ts): what `decide` is told (DecideContext) and what
// it answers (Step), with the request bodies a step carries. Types and one default only.
import type { ConditionPatchBody, GuardedConditionPatchBody } from '../cluster/requestBodies.js';
import type { ContainerUpdate, DrainPolicy } from '../plan/types.js';
import type { PodCompletion } from './completion.js';
import type { Resources } from './resources.js';
import type { Direction, InPlaceState } from './state.js';

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
  /** Which pods are drained (`strategy.drain`); default `whenRestarting`. */
  drain?: DrainPolicy;
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
  /**
   * How long this process has seen the pod not Ready since it closed the gate itself (a monotonic
   * clock). Then the drain counts from that sight, to the millisecond. Undefined for a pod it did
   * not close in this run (a resumed run, a gate closed by an earlier one): the drain counts from
   * the condition's stored time, conservatively (podView.ts, latestInstantMs).
   */
  notReadySeenForMs?: number;
}

/** The flow's guarded gate patch for `pods/{name}/status` (built by cluster/requestBodies.ts). */
export type GatePatch = GuardedConditionPatchBody;

/** Strategic-merge patch body for `pods/{name}`: new images by container name (none for a resize only) + the state. */
export interface ImagePatch {
  metadata: { resourceVersion?: string; annotations: Record<string, string> };
  spec?: { containers: { name: string; image: string }[] };
}

/** Strategic-merge patch body for `pods/{name}/resize`: target CPU and memory by container name. */
interface ResizePatch {
  metadata: { resourceVersion?: string };
  spec: { containers: { name: string; resources: Resources }[] };
}

type RefuseReason = 'GateMissing' | 'ContainerMissing' | 'QosChange';
type ForeignReason = 'OtherRollout' | 'MalformedState' | 'UpdatingElsewhere';

/**
 * The next step for one pod. Every step carries a one-line `message` for status output. The steps
 * that end the flow are named by how it ends (flowEnd.ts): done, failed, refused, foreign, vanished, skipped.
 */
export type Step =
  | { kind: 'vanished'; reason: 'Gone' | 'Replaced' | 'Terminating'; message: string }
  | { kind: 'refused'; reason: RefuseReason; message: string }
  /** The pod is held by another flow (plan, revision or direction) or by something else: the caller decides. */
  | { kind: 'foreign'; reason: ForeignReason; message: string; state?: InPlaceState }
  | { kind: 'skipped'; reason: 'AtTarget' | 'NothingToRollBack'; message: string }
  | { kind: 'close-gate'; body: GatePatch; message: string }
  /** Wait for the pod to turn not Ready, then for `drainMs`. Re-decide on a pod event or after `retryAfterMs`. */
  | { kind: 'wait-drain'; reason: 'StillReady' | 'Draining'; retryAfterMs: number; message: string }
  | { kind: 'patch'; body: ImagePatch; state: InPlaceState; message: string }
  /** After the state is on the pod: the resize through `pods/{name}/resize`. */
  | { kind: 'resize'; body: ResizePatch; state: InPlaceState; message: string }
  | { kind: 'wait-complete'; retryAfterMs: number; completion: PodCompletion; message: string }
  | { kind: 'open-gate'; body: GatePatch; message: string }
  | { kind: 'wait-ready'; retryAfterMs: number; message: string }
  | { kind: 'done'; state?: InPlaceState; message: string }
  /**
   * `reclose`: the gate patch to send before ending, when the pod failed with its gate open (its
   * new container crashed while turning Ready). A failed pod keeps its gate False
   * (docs/plan-reference.md, `failurePolicy`), closed in this flow's name so that a rollback or a
   * re-run recognizes it. Unguarded (no
   * resourceVersion): the pod has failed whatever changed since, and its gate must end False.
   */
  | { kind: 'failed'; reason: string; message: string; state?: InPlaceState; reclose?: ConditionPatchBody };
