// A plan with thousands of mistakes: the loader reports the first MAX_REPORTED_ERRORS in text
// order and counts the rest; the text output ends with "… and N more errors".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planFailureJson, planFailureText } from '../../../src/cli/loadPlan.js';
import { formatErrors } from '../../../src/errorText.js';
import { loadPlanText, MAX_REPORTED_ERRORS } from '../../../src/plan/load.js';

const PLAN = `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: web }
spec:
  target: { namespace: web, selector: { matchLabels: { app: web } } }
  update:
    containers:
`;

const refused = (text: string) => {
  const result = loadPlanText(text, 'p.yaml');
  assert.equal(result.ok, false, 'expected the plan to be refused');
  if (result.ok) throw new Error('unreachable');
  return result;
};

test('3,000 unknown keys: the first 100 reported in text order, 2,900 counted', () => {
  const keys = Array.from({ length: 3000 }, (_, i) => `extra${i}: ${i}`).join('\n');
  const r = refused(`${PLAN}      - { name: a, image: "nginx:1" }\n${keys}\n`);
  assert.equal(r.errors.length, MAX_REPORTED_ERRORS);
  assert.equal(r.moreErrors, 2900);
  assert.deepEqual(
    r.errors.slice(0, 2).map((e) => `${e.pos.line}:${e.pos.col} ${e.code} ${e.pos.path}`),
    ['9:1 PLAN_UNKNOWN_FIELD extra0', '10:1 PLAN_UNKNOWN_FIELD extra1'],
  );
  assert.ok(r.errors.every((e, i) => i === 0 || e.pos.line > r.errors[i - 1]!.pos.line));
});

test('schema and semantic errors together are counted exactly, whatever their mix', () => {
  // Each container: a name the schema refuses (C_i) and an image the semantic check refuses (A:1): 2 errors each.
  const containers = Array.from({ length: 300 }, (_, i) => `      - { name: C_${i}, image: "A:1" }`).join('\n');
  const r = refused(`${PLAN}${containers}\n`);
  assert.equal(r.errors.length + r.moreErrors, 600);
  assert.equal(r.errors.length, MAX_REPORTED_ERRORS);
});

test('a few errors: all reported, nothing more', () => {
  const r = refused(`${PLAN}      - { name: a, image: "nginx:1" }\nextra: 1\nother: 2\n`);
  assert.equal(r.errors.length, 2);
  assert.equal(r.moreErrors, 0);
  assert.doesNotMatch(planFailureText('p.yaml', r), /more error/);
  assert.doesNotMatch(planFailureJson('p.yaml', r), /moreErrors/);
});

test('the text output shows each error with its source line, then "… and N more errors" and the total', () => {
  const keys = Array.from({ length: 150 }, (_, i) => `extra${i}: ${i}`).join('\n');
  const r = refused(`${PLAN}      - { name: a, image: "nginx:1" }\n${keys}\n`);
  const lines = planFailureText('p.yaml', r).split('\n');
  assert.equal(lines.length, MAX_REPORTED_ERRORS * 3 + 2);
  assert.match(lines[0]!, /^p\.yaml:9:1 PLAN_UNKNOWN_FIELD extra0: /);
  assert.deepEqual(lines.slice(1, 3), ['   9 | extra0: 0', '     | ^']);
  assert.deepEqual(lines.slice(-2), ['… and 50 more errors', 'FAIL p.yaml (150 errors)']);
  assert.deepEqual(JSON.parse(planFailureJson('p.yaml', r)).moreErrors, 50);
});

test('formatErrors quotes each error its own line of one text, CRLF or not', () => {
  const text = 'a: 1\r\nb: 2\r\nc: 3\r\n';
  const errs = [2, 3].map((line) => ({
    code: 'PLAN_YAML' as const,
    message: 'm',
    pos: { file: 'f', line, col: 1, path: '' },
  }));
  assert.deepEqual(formatErrors(errs, text, 1), [
    'f:2:1 PLAN_YAML m\n   2 | b: 2\n     | ^',
    'f:3:1 PLAN_YAML m\n   3 | c: 3\n     | ^',
    '… and 1 more error',
  ]);
});

test('a syntax error at a 5,000-character token quotes its first 60 characters, not the whole token', () => {
  const token = 'a'.repeat(5000);
  const r = loadPlanText(`- a\nb: ${token}\n`, 'plan.yaml');
  assert.equal(r.ok, false);
  if (r.ok) return;
  const long = r.errors.filter((e) => e.message.includes('aaaa'));
  assert.ok(long.length > 0, JSON.stringify(r.errors.map((e) => e.message)));
  for (const e of long) assert.ok(e.message.length < 200, `${e.message.length} chars: ${e.message.slice(0, 120)}`);
});
