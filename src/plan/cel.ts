// Gate conditions are CEL over `result`: a number (a scalar query) or a list of numbers (a
// vector's sample values). Compiling them here catches typos before a rollout starts. The
// environment is the gate runner's own, so what validates is exactly what runs.
import { conditionEnvironment } from '../gates/conditions.js';

export interface CelProblem {
  reason: string;
  /** Character offset of the problem inside the expression, when the library knows it. */
  offset?: number;
}

/** Undefined when `expression` compiles to something that can be a bool; else what is wrong. */
export function celProblem(expression: string): CelProblem | undefined {
  const checked = conditionEnvironment().check(expression);
  if (!checked.valid) {
    const error = checked.error;
    const reason = (error?.summary ?? error?.message ?? 'it does not compile').split('\n')[0] ?? '';
    const offset = error?.range?.start;
    return offset === undefined ? { reason } : { reason, offset };
  }
  if (checked.type !== 'bool' && checked.type !== 'dyn') return { reason: `it yields ${checked.type}, not bool` };
  return undefined;
}
