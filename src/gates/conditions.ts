// CEL conditions of a Prometheus gate: compiled once when the gate starts, evaluated per
// measurement over `result` and `results` (see prometheus-response.ts).
import { Environment } from '@marcbachmann/cel-js';

export interface ConditionVars {
  result: number | number[];
  results: number[];
}

export interface Condition {
  /** The CEL text as written in the plan. */
  readonly text: string;
  /** true/false, or an error message when evaluation failed or did not give a bool. */
  evaluate(vars: ConditionVars): { ok: true; value: boolean } | { ok: false; error: string };
}

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
 * int/double arithmetic. One for every gate; the plan validator should check conditions in this
 * same environment so that what validates also runs.
 */
export function conditionEnvironment(): Environment {
  shared ??= addMixedArithmetic(new Environment().registerVariable('result', 'dyn').registerVariable('results', 'list<double>'));
  return shared;
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();

/**
 * Parses and type-checks a condition. Errors name the condition and the problem, e.g.
 * `successCondition "reslt < 1": Unknown variable: reslt`.
 */
export function compileCondition(label: string, text: string): { ok: true; condition: Condition } | { ok: false; error: string } {
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
          if (typeof value !== 'boolean') return { ok: false, error: `${label} ${text} gave ${String(value)}, not a bool` };
          return { ok: true, value };
        } catch (err) {
          return { ok: false, error: `${label} ${text} failed: ${firstLine(err)}` };
        }
      },
    },
  };
}
