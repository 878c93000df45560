// CEL conditions of gates (src/plan/cel.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { celProblem } from '../../../src/plan/cel.js';

describe('CEL conditions', () => {
  test('conditions over result compile', () => {
    for (const ok of [
      'result < 0.01',
      'result >= 0.05',
      'result.all(x, x < 0.01)',
      'size(result) > 0 && result[0] < 0.1',
      'result == 0.0 || result > 1.0',
      'result * 100 > 5',
      'results.all(x, x < 0.01)',
    ]) {
      assert.equal(celProblem(ok), undefined, ok);
    }
  });
  test('syntax errors, unknown variables and non-bool results are reported, with where', () => {
    assert.deepEqual(celProblem('result <'), { reason: 'Unexpected token: EOF', offset: 8 });
    assert.deepEqual(celProblem('reslt < 1'), { reason: 'Unknown variable: reslt', offset: 0 });
    assert.deepEqual(celProblem('"ok"'), { reason: 'it yields string, not bool' });
  });
});
