// The rules of a Prometheus gate, as pure functions: how one query answer becomes a measurement
// phase, and how the measurements so far decide the gate. The timers live in prometheus.ts.
import type { Condition } from './conditions.js';
import { formatValue } from './formatValue.js';
import type { QueryValue } from './prometheusResponse.js';
import type { MeasurementPhase, WouldHave } from './types.js';

export interface Conditions {
  success?: Condition;
  failure?: Condition;
}

export type NoDataPolicy = 'pass' | 'fail' | 'inconclusive';

export interface Classified {
  phase: MeasurementPhase;
  message: string;
}

const NO_DATA_PHASE: Record<NoDataPolicy, MeasurementPhase> = {
  pass: 'successful',
  fail: 'failed',
  inconclusive: 'inconclusive',
};

/**
 * One answer → one phase.
 * - failureCondition true → failed (it wins when both are true: the safe side).
 * - successCondition true → successful.
 * - both written, neither true → inconclusive.
 * - only successCondition written, false → failed; only failureCondition written, false → successful.
 * - an empty answer → the `noData` policy; a CEL evaluation error → error.
 */
export function classify(value: QueryValue, conditions: Conditions, noData: NoDataPolicy): Classified {
  if (value.kind === 'empty')
    return { phase: NO_DATA_PHASE[noData], message: `query returned no data (noData: ${noData})` };
  const shown = `result ${formatValue(value.result)}`;
  const vars = { result: value.result, results: value.results };
  const { success, failure } = conditions;

  if (failure) {
    const f = failure.evaluate(vars);
    if (!f.ok) return { phase: 'error', message: `${shown}: ${f.error}` };
    if (f.value) return { phase: 'failed', message: `${shown} matched failureCondition ${failure.text}` };
  }
  if (success) {
    const s = success.evaluate(vars);
    if (!s.ok) return { phase: 'error', message: `${shown}: ${s.error}` };
    if (s.value) return { phase: 'successful', message: `${shown} matched successCondition ${success.text}` };
    if (failure)
      return {
        phase: 'inconclusive',
        message: `${shown} matched neither successCondition ${success.text} nor failureCondition ${failure.text}`,
      };
    return { phase: 'failed', message: `${shown} did not match successCondition ${success.text}` };
  }
  if (failure) return { phase: 'successful', message: `${shown} did not match failureCondition ${failure.text}` };
  // No condition at all: the loader refuses such a gate; here it would prove nothing.
  return { phase: 'inconclusive', message: `${shown}: no successCondition or failureCondition to judge it` };
}

export interface Limits {
  count: number;
  failureLimit: number;
  inconclusiveLimit: number;
  consecutiveErrorLimit: number;
  /** 0: off. N > 0: N successful measurements in a row pass the gate at once; without such a run by `count`, inconclusive. */
  consecutiveSuccessLimit?: number;
}

export type Decision = { kind: 'continue' } | { kind: 'passed' | 'failed' | 'inconclusive'; message: string };

export type Verdict = { result: 'passed' | 'failed' | 'inconclusive'; message: string; wouldHave?: WouldHave };

/**
 * A final decision → the gate's verdict. A dry-run gate always passes (it never halts a rollout);
 * a failure or inconclusive end is kept as `wouldHave` and said in the message, e.g.
 * `error-rate: dry run; would have failed: result 0.5 matched failureCondition result >= 0.05 at measurement 1 of 3`.
 * A dry-run gate ends where a real one would, so it takes no longer than the real gate would.
 */
export function verdictOf(gate: string, decision: Exclude<Decision, { kind: 'continue' }>, dryRun: boolean): Verdict {
  if (!dryRun || decision.kind === 'passed') {
    return {
      result: decision.kind,
      message: dryRun ? decision.message.replace(`${gate}: `, `${gate}: dry run, `) : decision.message,
    };
  }
  const reason = decision.message.startsWith(`${gate}: `) ? decision.message.slice(gate.length + 2) : decision.message;
  return {
    result: 'passed',
    message: `${gate}: dry run; would have ${decision.kind === 'failed' ? 'failed' : 'been inconclusive'}: ${reason}`,
    wouldHave: { result: decision.kind, message: decision.message },
  };
}

/**
 * Measurements so far → go on, or the gate's result. Every attempt counts toward `count`,
 * errors included, so a gate never runs longer than initialDelay + (count − 1) × interval.
 * - more than `failureLimit` failed → failed, at once;
 * - more than `inconclusiveLimit` inconclusive → inconclusive, at once;
 * - more than `consecutiveErrorLimit` errors in a row → failed, at once;
 * - `consecutiveSuccessLimit` N > 0: the last N measurements all successful → passed, at once
 *   (the limits above are checked first, so a failure beyond failureLimit still fails; a
 *   tolerated failure, inconclusive or error breaks the run);
 * - after `count` measurements: with consecutiveSuccessLimit N > 0, inconclusive (no run of N);
 *   else passed if at least one was successful, else inconclusive.
 * E.g. count 10, consecutiveSuccessLimit 3, failureLimit 1: S F S S S → passed at measurement 5;
 * S F S F → failed at measurement 4.
 */
export function decide(gate: string, measurements: readonly Classified[], limits: Limits): Decision {
  const count = Math.max(1, limits.count);
  const n = measurements.length;
  if (n === 0) return { kind: 'continue' };
  const last = measurements[n - 1]!;
  const at = `at measurement ${n} of ${count}`;
  const tally = (phase: MeasurementPhase) => measurements.filter((m) => m.phase === phase).length;
  const failed = tally('failed');
  const inconclusive = tally('inconclusive');
  const errors = tally('error');
  const successful = tally('successful');

  if (last.phase === 'failed' && failed > limits.failureLimit) {
    const beyond = limits.failureLimit > 0 ? ` (${failed} failed, failureLimit ${limits.failureLimit})` : '';
    return { kind: 'failed', message: `${gate}: ${last.message} ${at}${beyond}` };
  }
  if (last.phase === 'inconclusive' && inconclusive > limits.inconclusiveLimit) {
    const beyond =
      limits.inconclusiveLimit > 0
        ? ` (${inconclusive} inconclusive, inconclusiveLimit ${limits.inconclusiveLimit})`
        : '';
    return { kind: 'inconclusive', message: `${gate}: ${last.message} ${at}${beyond}` };
  }
  if (last.phase === 'error') {
    let run = 0;
    for (let i = n - 1; i >= 0 && measurements[i]!.phase === 'error'; i--) run++;
    if (run > limits.consecutiveErrorLimit) {
      return {
        kind: 'failed',
        message: `${gate}: ${run} measurement errors in a row (consecutiveErrorLimit ${limits.consecutiveErrorLimit}), the last ${at}: ${last.message}`,
      };
    }
  }
  const streakNeeded = limits.consecutiveSuccessLimit ?? 0;
  let streak = 0;
  for (let i = n - 1; i >= 0 && measurements[i]!.phase === 'successful'; i--) streak++;
  if (streakNeeded > 0 && streak >= streakNeeded) {
    return {
      kind: 'passed',
      message: `${gate}: ${streak} measurements successful in a row (consecutiveSuccessLimit ${streakNeeded}) ${at}; last: ${last.message}`,
    };
  }
  if (n < count) return { kind: 'continue' };

  const summary = [`${successful} of ${n} measurements successful`];
  if (failed) summary.push(`${failed} failed`);
  if (inconclusive) summary.push(`${inconclusive} inconclusive`);
  if (errors) summary.push(`${errors} error${errors === 1 ? '' : 's'}`);
  if (streakNeeded > 0) {
    return {
      kind: 'inconclusive',
      message: `${gate}: no ${streakNeeded} successful measurements in a row (consecutiveSuccessLimit ${streakNeeded}) in ${n} (${summary.join(', ')}); last: ${last.message}`,
    };
  }
  if (successful === 0)
    return {
      kind: 'inconclusive',
      message: `${gate}: no successful measurement (${summary.join(', ')}); last: ${last.message}`,
    };
  return { kind: 'passed', message: `${gate}: ${summary.join(', ')}; last: ${last.message}` };
}
