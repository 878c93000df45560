// What every answer of the plan loader must be, for the fuzz tests: a plan, or at most
// MAX_REPORTED_ERRORS errors in text order, each naming a place and saying what was expected,
// with a count of the rest. The loader must return, never throw: a throw fails the property.
import assert from 'node:assert/strict';
import { formatErrors } from '../../src/errorText.js';
import { loadPlanText, MAX_REPORTED_ERRORS, type LoadResult } from '../../src/plan/load.js';

/** The loader's answer is well-formed: a plan, or errors that each name a place and say what was expected. */
function checkResult(r: LoadResult, text: string): void {
  if (r.ok) return;
  assert.ok(r.errors.length > 0, 'an invalid plan has at least one error');
  assert.ok(r.errors.length <= MAX_REPORTED_ERRORS, `${r.errors.length} errors reported`);
  assert.ok(Number.isInteger(r.moreErrors) && r.moreErrors >= 0, `moreErrors ${r.moreErrors}`);
  let previous = { line: 0, col: 0 };
  for (const e of r.errors) {
    assert.equal(e.pos.file, 'plan.yaml');
    assert.match(e.code, /^PLAN_/);
    assert.ok(
      Number.isInteger(e.pos.line) && e.pos.line >= 0 && Number.isInteger(e.pos.col) && e.pos.col >= 0,
      `line/col ${e.pos.line}:${e.pos.col}`,
    );
    assert.ok(
      e.pos.line > previous.line || (e.pos.line === previous.line && e.pos.col >= previous.col),
      `errors in text order: ${e.pos.line}:${e.pos.col} after ${previous.line}:${previous.col}`,
    );
    previous = e.pos;
    assert.ok(
      typeof e.message === 'string' && e.message.length > 0 && e.message.length < 2_000,
      `message of ${e.message.length} chars`,
    );
    assert.doesNotMatch(e.message, /\bundefined\b|\[object Object\]|TypeError|RangeError/, e.message);
  }
  const shown = formatErrors(r.errors, r.text ?? text, r.moreErrors);
  assert.ok(
    shown.every((s) => s.length < 10_000),
    'each formatted error under 10,000 chars',
  );
}

/** Loads `text` as plan.yaml and checks the answer. */
export function load(text: string): LoadResult {
  const r = loadPlanText(text, 'plan.yaml');
  checkResult(r, text);
  return r;
}
