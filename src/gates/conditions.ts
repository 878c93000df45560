// CEL conditions of a Prometheus gate: compiled once when the gate starts, evaluated per
// measurement over `result` and `results` (see prometheusResponse.ts).
import type { Environment } from '@marcbachmann/cel-js';
import { conditionEnvironment } from '../plan/cel.js';

interface ConditionVars {
  result: number | number[];
  results: number[];
}

export interface Condition {
  /** The CEL text as written in the plan. */
  readonly text: string;
  /** true/false, or an error message when evaluation failed or did not give a bool. */
  evaluate(vars: ConditionVars): { ok: true; value: boolean } | { ok: false; error: string };
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();

/**
 * Parses and type-checks a condition. Errors name the condition and the problem, e.g.
 * `successCondition "reslt < 1": Unknown variable: reslt`.
 */
export function compileCondition(
  label: string,
  text: string,
): { ok: true; condition: Condition } | { ok: false; error: string } {
  const env = conditionEnvironment();
  let program: ReturnType<Environment['parse']>;
  try {
    program = env.parse(text);
  } catch (err) {
    return { ok: false, error: `${label} "${text}": ${firstLine(err)}` };
  }
  const checked = env.check(text);
  if (!checked.valid) return { ok: false, error: `${label} "${text}": ${firstLine(checked.error)}` };
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    return { ok: false, error: `${label} "${text}": gives a ${checked.type}, expected a bool` };
  }
  return {
    ok: true,
    condition: {
      text,
      evaluate(vars) {
        try {
          const value: unknown = program(vars);
          if (typeof value !== 'boolean')
            return { ok: false, error: `${label} ${text} gave ${String(value)}, not a bool` };
          return { ok: true, value };
        } catch (err) {
          return { ok: false, error: `${label} ${text} failed: ${firstLine(err)}` };
        }
      },
    },
  };
}
