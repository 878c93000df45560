// A gate as the dashboard charts it: its measurements over time and, where a condition compares
// `result` with a number (`result < 0.02`), that number as a line to plot the values against.
// Other conditions are shown as text only. Pure.
import type { Plan } from '../plan/types.js';
import type { GateRecord } from '../record/record.js';

export interface Threshold {
  op: '<' | '<=' | '>' | '>=' | '==' | '!=';
  value: number;
}

export interface GateView {
  wave: number;
  gate: string;
  result: string;
  message: string;
  at: string;
  dryRun: boolean;
  /** Measurements in order; `value` is the scalar result, or a vector's largest value; null when none came. */
  measurements: { index: number; count: number; at: string; value: number | null; phase: string; message: string }[];
  successCondition?: string;
  failureCondition?: string;
  success?: Threshold;
  failure?: Threshold;
}

const COMPARISON = /^\s*result\s*(<=|>=|==|!=|<|>)\s*(-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$/;

/** `result < 0.02` → {op: '<', value: 0.02}; undefined for any other condition. */
export function thresholdOf(condition: string | undefined): Threshold | undefined {
  const m = condition === undefined ? null : COMPARISON.exec(condition);
  if (!m) return undefined;
  return { op: m[1] as Threshold['op'], value: Number(m[2]) };
}

/** The number plotted for a measured value: a scalar, or the largest of a vector's values. */
export function plottedValue(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (Array.isArray(value)) {
    const numbers = value.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    return numbers.length > 0 ? Math.max(...numbers) : null;
  }
  return null;
}

export function gateView(g: GateRecord, plan: Plan | undefined): GateView {
  const prometheus = plan?.gates.find((p) => p.name === g.gate)?.prometheus;
  const success = thresholdOf(prometheus?.successCondition);
  const failure = thresholdOf(prometheus?.failureCondition);
  return {
    wave: g.wave,
    gate: g.gate,
    result: g.result,
    message: g.message,
    at: g.at,
    dryRun: g.dryRun === true,
    measurements: (g.measurements ?? []).map((m) => ({
      index: m.index,
      count: m.count,
      at: m.at,
      value: plottedValue(m.value),
      phase: m.phase,
      message: m.message,
    })),
    ...(prometheus?.successCondition ? { successCondition: prometheus.successCondition } : {}),
    ...(prometheus?.failureCondition ? { failureCondition: prometheus.failureCondition } : {}),
    ...(success ? { success } : {}),
    ...(failure ? { failure } : {}),
  };
}
