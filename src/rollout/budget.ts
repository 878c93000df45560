// The unavailability budget and the failure limit: how many selected pods may be not Ready at
// once, and how many may fail before the rollout halts. Pure; the runner only asks.
// A start is judged from one StartRequest, which also holds the concurrency, so that `startBlocker`
// says why not from the very same inputs.
import type { Amount } from '../plan/types.js';
import { resolveAmount } from './amount.js';

/**
 * Most selected pods that may be not Ready at once.
 *
 * A share is rounded down, as Kubernetes rounds a Deployment's `maxUnavailable` down, so the cap
 * is never looser than written; but the budget is never below 1, or no pod could ever start.
 * Worked examples:
 * - `"10%"` of 25 pods = 2.5 → 2.
 * - `"10%"` of 8 pods = 0.8 → 0 → 1 (one pod at a time).
 * - `"29%"` of 100 pods = 28.999999999999996 in floating point → 29, not 28 (see `snapToInteger`).
 * - count `3` → 3, whatever the fleet size.
 */
export function resolveBudget(maxUnavailable: Amount, selected: number): number {
  return Math.max(1, resolveAmount(maxUnavailable, selected, 'down'));
}

/**
 * Most pods that may fail before the rollout halts: the rollout halts at failure
 * `maxFailed + 1`. A share is rounded down (`"10%"` of 15 pods = 1.5 → 1: the second failure
 * halts), and may be 0 (the first failure halts).
 */
export function resolveMaxFailed(maxFailed: Amount, selected: number): number {
  return resolveAmount(maxFailed, selected, 'down');
}

/** True once `failed` pods are more than the limit allows. */
export function exceedsMaxFailed(failed: number, maxFailed: number): boolean {
  return failed > maxFailed;
}

export interface StartRequest {
  /**
   * Selected pods not Ready that kwave is NOT upgrading right now: crashing, pending, failed
   * earlier and still drained, drained by someone else. Pods in flight are not counted here.
   */
  unreadyNotInFlight: number;
  /** Pods kwave has started and not finished, Ready or not at this instant. */
  inFlight: number;
  /** From `resolveBudget`. */
  budget: number;
  /** The plan's `strategy.concurrency`. */
  concurrency: number;
  /**
   * The pod about to start is itself not Ready now (left drained by an earlier run, crashing):
   * starting it makes no more pods unavailable, so the budget does not hold it back, as a
   * Deployment replaces its unavailable pods first.
   */
  candidateUnready?: boolean;
}

export type StartBlocker = 'concurrency' | 'budget';

/**
 * Why one more pod may not start now, or `undefined` when it may.
 *
 * Every pod in flight counts as unavailable for its whole flight, even during the moments it is
 * still (drain not yet seen) or again (gate open, `minReadySeconds` running) Ready: it is about
 * to be, or may again become, not Ready, and counting it only while not Ready would let the next
 * start overshoot the cap. So a new pod may start when
 * `inFlight < concurrency` and `unreadyNotInFlight + inFlight + 1 ≤ budget` — or, if it is not
 * Ready already, whatever the budget: otherwise pods an earlier run left drained would hold the
 * budget against each other for ever (real chaos seed 2634132944: a run killed in wave 2 after
 * wave 1's pod was left for its NotReady node; the next run's wave 1 waited on wave 2's pods).
 *
 * Worked example, budget 3, concurrency 10:
 * - 1 pod crashing elsewhere, 1 in flight: 1 + 1 + 1 = 3 ≤ 3 → start (then 3 may be unready).
 * - 2 crashing, 1 in flight: 2 + 1 + 1 = 4 > 3 → wait for the budget.
 * - 3 crashing, nothing in flight: 3 + 0 + 1 = 4 > 3 → the rollout waits until a pod recovers,
 *   or upgrades one of the crashing pods (which frees the budget if the new image runs).
 */
export function startBlocker(req: StartRequest): StartBlocker | undefined {
  if (req.inFlight >= req.concurrency) return 'concurrency';
  if (!req.candidateUnready && req.unreadyNotInFlight + req.inFlight + 1 > req.budget) return 'budget';
  return undefined;
}

/** True when one more pod may start now (see `startBlocker` for the rule). */
export function canStart(req: StartRequest): boolean {
  return startBlocker(req) === undefined;
}

/**
 * Whether the budget can never free up: nothing is in flight and every pod holding it failed.
 * Failed pods keep their gate closed (docs/plan-reference.md, `failurePolicy`), so they hold their
 * share for good; waiting would wait forever, and the rollout halts instead. `holders` are the not-Ready selected pods
 * counted against the budget (see `StartRequest.unreadyNotInFlight`).
 */
export function heldOnlyByFailures(holders: readonly string[], inFlight: number, failed: ReadonlySet<string>): boolean {
  return heldForGood(holders, inFlight, (k) => failed.has(k));
}

/** Nothing in flight, and every pod holding the budget is one that `staysOut` of service for the rest of the run. */
export function heldForGood(holders: readonly string[], inFlight: number, staysOut: (key: string) => boolean): boolean {
  return inFlight === 0 && holders.length > 0 && holders.every(staysOut);
}
