// The loader as a whole: all errors at once, positions for the odd cases, text output.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatError } from '../../../src/errorText.js';
import { loadPlanText } from '../../../src/plan/load.js';
import type { PlanError } from '../../../src/plan/planError.js';

function errorsOf(text: string): PlanError[] {
  const result = loadPlanText(text, 'p.yaml');
  assert.equal(result.ok, false, 'expected the plan to be refused');
  return result.ok ? [] : result.errors;
}

const at = (errors: PlanError[]) => errors.map((e) => `${e.pos.line}:${e.pos.col} ${e.pos.path}`);

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

  test('text output: header with the code, source line, caret under the column', () => {
    const text = 'a: 1\nspec:\n  strategy:\n    maxUnavailable: ten\n';
    const err: PlanError = {
      code: 'PLAN_INVALID_VALUE',
      message: 'expected X, found "ten"',
      pos: { file: 'plans/web.yaml', line: 4, col: 21, path: 'spec.strategy.maxUnavailable' },
    };
    assert.equal(
      formatError(err, text),
      [
        'plans/web.yaml:4:21 PLAN_INVALID_VALUE spec.strategy.maxUnavailable: expected X, found "ten"',
        '   4 |     maxUnavailable: ten',
        '     |                     ^',
      ].join('\n'),
    );
    assert.equal(
      formatError({ ...err, pos: { file: 'plans/web.yaml', line: 0, col: 0, path: '' } }, text),
      'plans/web.yaml PLAN_INVALID_VALUE expected X, found "ten"',
    );
  });
});

describe('error codes: each plan error names its kind', () => {
  const HEAD = 'apiVersion: kwave.dev/v1alpha1\nkind: RolloutPlan\nmetadata: { name: web }\n';
  const TARGET = '  target: { namespace: web, selector: { matchLabels: { app: web } } }\n';
  const UPDATE = '  update: { containers: [{ name: a, image: "a:1" }] }\n';
  const STRATEGY = '  strategy: { waveSize: 1 }\n';
  const codesOf = (text: string) => errorsOf(text).map((e) => e.code);

  test('whole-file problems', () => {
    assert.deepEqual(codesOf(''), ['PLAN_EMPTY']);
    assert.deepEqual(codesOf('# only a comment\n'), ['PLAN_EMPTY']);
    assert.deepEqual(codesOf('a: [1\n'), ['PLAN_YAML']);
    assert.deepEqual(codesOf('a: 1\na: 2\n'), ['PLAN_YAML']);
    assert.deepEqual(codesOf('x'.repeat(1024 * 1024 + 1)), ['PLAN_TOO_LARGE']);
  });

  test('schema problems: missing, unknown, conflicting, duplicate, invalid', () => {
    assert.deepEqual(codesOf(`${HEAD}spec:\n${TARGET}`), ['PLAN_MISSING_FIELD']);
    assert.deepEqual(codesOf(`${HEAD}spec:\n${TARGET}${UPDATE}${STRATEGY}  stratgy: {}\n`), ['PLAN_UNKNOWN_FIELD']);
    assert.deepEqual(codesOf(`${HEAD}spec:\n${TARGET}${UPDATE}  strategy: { waves: [1], waveSize: 1 }\n`), [
      'PLAN_CONFLICT',
    ]);
    assert.deepEqual(codesOf(`${HEAD}spec:\n${TARGET}${UPDATE}  strategy: { waveSize: 1, concurrency: 0 }\n`), [
      'PLAN_INVALID_VALUE',
    ]);
  });

  test('semantic problems: a name twice, a gate that checks nothing, two kinds of check in one gate', () => {
    const gates = (g: string) => `${HEAD}spec:\n${TARGET}${UPDATE}${STRATEGY}  gates: ${g}\n`;
    assert.deepEqual(codesOf(gates('[{ name: g, pause: 1m }, { name: g, pause: 1m }]')), ['PLAN_DUPLICATE']);
    assert.deepEqual(codesOf(gates('[{ name: g }]')), ['PLAN_MISSING_FIELD']);
    assert.deepEqual(
      codesOf(
        gates(
          '[{ name: g, prometheus: { address: "http://p", query: q, successCondition: "result < 1" }, webhook: { url: "http://w" } }]',
        ),
      ),
      ['PLAN_CONFLICT'],
    );
  });
});
