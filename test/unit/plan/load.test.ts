// The loader as a whole: all errors at once, positions for the odd cases, text output.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatPlanError } from '../../../src/plan/formatPlanError.js';
import { loadPlanText } from '../../../src/plan/load.js';
import type { PlanError } from '../../../src/plan/planError.js';

function errorsOf(text: string): PlanError[] {
  const result = loadPlanText(text, 'p.yaml');
  assert.equal(result.ok, false, 'expected the plan to be refused');
  return result.ok ? [] : result.errors;
}

const at = (errors: PlanError[]) => errors.map((e) => `${e.line}:${e.col} ${e.path}`);

describe('loader', () => {
  test('reports schema and semantic errors of every part at once, in text order', () => {
    const errors = errorsOf(`apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: Bad_Name }
spec:
  target: { namespace: web, selector: { matchLabels: { "-x": y } } }
  update: { containers: [{ name: a, image: "A:1" }] }
  strategy: { waves: ["50%", "10%"], concurrency: 0 }
  gates: [{ name: g, prometheus: { address: "http://p", query: q, successCondition: "result <" } }]
`);
    assert.deepEqual(at(errors), [
      '3:19 metadata.name',
      '5:56 spec.target.selector.matchLabels["-x"]',
      '6:44 spec.update.containers[0].image',
      '7:30 spec.strategy.waves[1]',
      '7:51 spec.strategy.concurrency',
      '8:94 spec.gates[0].prometheus.successCondition', // at the end of "result <", inside the quotes,
    ]);
  });

  test('a semantic check is skipped where the schema already failed (one mistake, one error)', () => {
    // "150%" fails the schema; the order check of the same list does not add "decreasing".
    const errors = errorsOf(`apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: web }
spec:
  target: { namespace: web, selector: { matchLabels: { app: web } } }
  update: { containers: [{ name: a, image: "a:1" }] }
  strategy: { waves: ["150%", "10%"] }
`);
    assert.deepEqual(at(errors), ['7:23 spec.strategy.waves[0]']);
  });

  test('an error under an alias points at the anchored value', () => {
    const errors = errorsOf(`apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: web }
x-common: &sel { matchLabels: { app: 1 } }
spec:
  target: { namespace: web, selector: *sel }
  update: { containers: [{ name: a, image: "a:1" }] }
  strategy: { waves: [1] }
`);
    assert.deepEqual(at(errors), ['4:1 x-common', '4:38 spec.target.selector.matchLabels.app']);
  });

  test('a missing value (key with nothing after it) points at the key', () => {
    const errors = errorsOf(`apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata:
  name:
spec: { target: { namespace: web, selector: { matchLabels: { a: b } } }, update: { containers: [{ name: a, image: "a:1" }] }, strategy: { waveSize: 1 } }
`);
    assert.deepEqual(at(errors), ['4:3 metadata.name']);
    assert.match(errors[0]?.message ?? '', /found nothing/);
  });

  test('text output: header, source line, caret under the column', () => {
    const text = 'a: 1\nspec:\n  strategy:\n    maxUnavailable: ten\n';
    const err: PlanError = {
      file: 'plans/web.yaml',
      line: 4,
      col: 21,
      path: 'spec.strategy.maxUnavailable',
      message: 'expected X, found "ten"',
    };
    assert.equal(
      formatPlanError(err, text),
      [
        'plans/web.yaml:4:21 spec.strategy.maxUnavailable: expected X, found "ten"',
        '   4 |     maxUnavailable: ten',
        '     |                     ^',
      ].join('\n'),
    );
    assert.equal(formatPlanError({ ...err, line: 0, col: 0, path: '' }), 'plans/web.yaml expected X, found "ten"');
  });
});
