// Gate conditions are CEL over one variable, `result`: a number (a scalar query) or a list of
// numbers (a vector's sample values). Compiling here catches typos before a rollout starts.
import { Environment } from '@marcbachmann/cel-js';

let env: Environment | undefined;

/** The CEL environment gate conditions run in; shared by the validator and the gate runner. */
export function gateConditionEnv(): Environment {
  env ??= new Environment().registerVariable('result', 'dyn');
  return env;
}

export interface CelProblem {
  reason: string;
  /** Character offset of the problem inside the expression, when the library knows it. */
  offset?: number;
}

/** Undefined when `expression` compiles to something that can be a bool; else what is wrong. */
export function celProblem(expression: string): CelProblem | undefined {
  const checked = gateConditionEnv().check(expression);
  if (!checked.valid) {
    const error = checked.error;
    const reason = (error?.summary ?? error?.message ?? 'it does not compile').split('\n')[0] ?? '';
    const offset = error?.range?.start;
    return offset === undefined ? { reason } : { reason, offset };
  }
  if (checked.type !== 'bool' && checked.type !== 'dyn') return { reason: `it yields ${checked.type}, not bool` };
  return undefined;
}
