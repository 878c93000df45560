import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileCondition } from '../../../src/gates/conditions.js';
import { compileGateConditions } from '../../../src/gates/prometheus.js';

function run(text: string, result: number | number[]): boolean | string {
  const c = compileCondition('successCondition', text);
  if (!c.ok) return `compile: ${c.error}`;
  const results = Array.isArray(result) ? result : [result];
  const v = c.condition.evaluate({ result, results });
  return v.ok ? v.value : `eval: ${v.error}`;
}

describe('CEL conditions over Prometheus doubles', () => {
  const rows: [string, number | number[], boolean][] = [
    // Integer literals against double results: CEL compares across numeric types.
    ['result < 1', 0.5, true],
    ['result < 1', 1, false],
    ['result == 0', 0, true],
    ['result <= 0', 0, true],
    ['result < 0.01', 0.002, true],
    ['result >= 0.05', 0.083, true],
    ['result > 100', 250, true],
    // Mixed int/double arithmetic, which plain CEL would reject.
    ['result * 100 > 5', 0.083, true],
    ['result * 100 < 5', 0.083, false],
    ['100 * result >= 8.3', 0.083, true],
    ['result / 2 < 1', 1.5, true],
    ['result + 1 > 1', 0.5, true],
    ['result - 1 < 0', 0.5, true],
    // Lists from multi-sample vectors.
    ['results.all(x, x < 0.01)', [0.001, 0.002], true],
    ['results.all(x, x < 0.01)', [0.001, 0.2], false],
    ['results.exists(x, x >= 0.05)', [0.001, 0.2], true],
    ['size(results) == 2', [0.1, 0.2], true],
    ['results[0] < 1', [0.5], true],
    ['result.all(x, x < 1)', [0.1, 0.2], true],
    // NaN compares false both ways; +Inf is large.
    ['result < 1', NaN, false],
    ['result >= 1', NaN, false],
    ['result > 1000', Infinity, true],
  ];
  for (const [text, value, expected] of rows) {
    test(`${text} with ${JSON.stringify(value)} → ${expected}`, () => {
      assert.equal(run(text, value), expected);
    });
  }

  test('a syntax error is reported when compiled, naming the condition', () => {
    assert.match(String(run('result <', 1)), /^compile: successCondition "result <": Unexpected token: EOF/);
  });
  test('an unknown variable is reported when compiled', () => {
    assert.match(String(run('reslt < 1', 1)), /^compile: successCondition "reslt < 1": Unknown variable: reslt/);
  });
  test('a condition that is not a bool is refused', () => {
    assert.match(String(run('"yes"', 1)), /gives a string, expected a bool/);
  });
  test('a dyn expression that turns out not to be a bool is an evaluation error', () => {
    assert.match(String(run('result', 1)), /^eval: successCondition result gave 1, not a bool/);
  });
  test('a gate needs at least one condition', () => {
    const c = compileGateConditions({});
    assert.equal(c.ok, false);
    assert.match(c.ok ? '' : c.error, /needs a successCondition, a failureCondition or both/);
  });
  test('compileGateConditions reports the failing one', () => {
    const c = compileGateConditions({ successCondition: 'result < 1', failureCondition: 'result >>= 2' });
    assert.match(c.ok ? '' : c.error, /^failureCondition "result >>= 2": /);
  });
});
