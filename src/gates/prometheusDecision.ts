// The rules of a Prometheus gate, as pure functions: how one query answer becomes a measurement
// phase, and how the measurements so far decide the gate. The timers live in prometheus.ts.
import type { Condition } from './conditions.js';
import { formatValue } from './formatValue.js';
import type { QueryValue } from './prometheusResponse.js';
import type { MeasurementPhase } from './types.js';

export interface Conditions {
  success?: Condition;
  failure?: Condition;
}

export type NoDataPolicy = 'pass' | 'fail' | 'inconclusive';

export interface Classified {
  phase: MeasurementPhase;
  message: string;
}

const NO_DATA_PHASE: Record<NoDataPolicy, MeasurementPhase> = { pass: 'successful', fail: 'failed', inconclusive: 'inconclusive' };

/**
 * One answer → one phase.
 * - failureCondition true → failed (it wins when both are true: the safe side).
 * - successCondition true → successful.
 * - both written, neither true → inconclusive.
 * - only successCondition written, false → failed; only failureCondition written, false → successful.
 * - an empty answer → the `noData` policy; a CEL evaluation error → error.
 */
export function classify(value: QueryValue, conditions: Conditions, noData: NoDataPolicy): Classified {
  if (value.kind === 'empty') return { phase: NO_DATA_PHASE[noData], message: `query returned no data (noData: ${noData})` };
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
    if (failure) return { phase: 'inconclusive', message: `${shown} matched neither successCondition ${success.text} nor failureCondition ${failure.text}` };
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
}

export type Decision = { kind: 'continue' } | { kind: 'passed' | 'failed' | 'inconclusive'; message: string };

/**
 * Measurements so far → go on, or the gate's result. Every attempt counts toward `count`,
 * errors included, so a gate never runs longer than initialDelay + (count − 1) × interval.
 * - more than `failureLimit` failed → failed, at once;
 * - more than `inconclusiveLimit` inconclusive → inconclusive, at once;
 * - more than `consecutiveErrorLimit` errors in a row → failed, at once;
 * - after `count` measurements: passed if at least one was successful, else inconclusive.
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
    const beyond = limits.inconclusiveLimit > 0 ? ` (${inconclusive} inconclusive, inconclusiveLimit ${limits.inconclusiveLimit})` : '';
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
  if (n < count) return { kind: 'continue' };

  const summary = [`${successful} of ${n} measurements successful`];
  if (failed) summary.push(`${failed} failed`);
  if (inconclusive) summary.push(`${inconclusive} inconclusive`);
  if (errors) summary.push(`${errors} error${errors === 1 ? '' : 's'}`);
  if (successful === 0) return { kind: 'inconclusive', message: `${gate}: no successful measurement (${summary.join(', ')}); last: ${last.message}` };
  return { kind: 'passed', message: `${gate}: ${summary.join(', ')}; last: ${last.message}` };
}
