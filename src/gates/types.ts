// Values every gate check produces. They go to the rollout record, the metrics and the output.

export const MEASUREMENT_PHASES = ['successful', 'failed', 'inconclusive', 'error'] as const;
export type MeasurementPhase = (typeof MEASUREMENT_PHASES)[number];

/** The value a measurement saw: a number, the list of a vector's values, an HTTP status, or nothing. */
type MeasuredValue = number | number[] | null;

export interface Measurement {
  /** ISO 8601 time the measurement was taken. */
  at: string;
  value: MeasuredValue;
  phase: MeasurementPhase;
  /** Why this phase, for people (e.g. `result 0.083 matched failureCondition result >= 0.05`). */
  message: string;
}

// The verdict words are the runner's (rollout/gateCheck.ts): gates plug into it.
import type { GateResult, WouldHave } from '../rollout/gateCheck.js';
export type { GateResult, WouldHave };

/** How a finished gate check is counted (`kwave_gate_checks_total{result}`): an interrupted one is not. */
export const GATE_CHECK_RESULTS = ['passed', 'failed', 'inconclusive'] as const satisfies readonly GateResult[];
export type GateCheckResult = (typeof GATE_CHECK_RESULTS)[number];

export interface GateOutcome {
  result: GateResult;
  /** Starts with the gate name, e.g. `error-rate: result 0.083 matched failureCondition …`. */
  message: string;
  measurements: Measurement[];
  /** A dry-run step that passed only because it is a dry run: what it would have done. */
  wouldHave?: WouldHave;
}

/**
 * A signal that fires after `ms` or when `parent` fires. Unlike AbortSignal.timeout, its timer
 * keeps the process alive, and clear() releases it once the request is done.
 */
export function deadline(
  ms: number,
  parent?: AbortSignal,
): { signal: AbortSignal; timedOut: () => boolean; clear: () => void } {
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new Error(`timed out after ${ms} ms`));
  }, ms);
  const onParent = () => ac.abort(parent?.reason);
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  return {
    signal: ac.signal,
    timedOut: () => timedOut,
    clear: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParent);
    },
  };
}
