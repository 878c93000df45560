// Gate conditions are CEL over `result`: a number (a scalar query) or a list of numbers (a
// vector's sample values). Their environment lives here, with the plan: the validator checks
// conditions in it (catching typos before a rollout starts) and the gate runner
// (gates/conditions.ts) evaluates them in the same one, so what validates is exactly what runs.
import { Environment } from '@marcbachmann/cel-js';

/**
 * Prometheus values are doubles, and CEL has no implicit int→double conversion in arithmetic:
 * plain CEL rejects `result * 100 > 5` ("no such overload: double * int"). Comparisons across
 * int and double already work (`result < 1`). These overloads make mixed arithmetic work too,
 * the way people write thresholds; CEL ints arrive in handlers as BigInt.
 */
function addMixedArithmetic(env: Environment): Environment {
  const ops: Record<string, (a: number, b: number) => number> = {
    '+': (a, b) => a + b,
    '-': (a, b) => a - b,
    '*': (a, b) => a * b,
    '/': (a, b) => a / b,
  };
  for (const [op, f] of Object.entries(ops)) {
    env.registerOperator(`double ${op} int: double`, (a: number, b: bigint) => f(a, Number(b)));
    env.registerOperator(`int ${op} double: double`, (a: bigint, b: number) => f(Number(a), b));
  }
  return env;
}

let shared: Environment | undefined;

/**
 * The CEL environment of gate conditions: `result` (dyn), `results` (list<double>) and mixed
 * int/double arithmetic. One for every gate and for the plan validator
 * (celProblem below).
 */
export function conditionEnvironment(): Environment {
  shared ??= addMixedArithmetic(
    new Environment().registerVariable('result', 'dyn').registerVariable('results', 'list<double>'),
  );
  return shared;
}

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
