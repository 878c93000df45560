// Loading a plan: read (the only I/O), parse the YAML, run the schema, run the semantic checks,
// normalize. Bad input never throws: the result lists every error of the file with its place.
import { readFile, stat } from 'node:fs/promises';
import type { ErrorObject } from 'ajv/dist/2020.js';
import type { Document, LineCounter } from 'yaml';
import type { PlanErrorCode } from '../errors.js';
import { describeValue } from './describe.js';
import { offsetOf } from './locate.js';
import { normalizePlan } from './normalize.js';
import { formatPath, fromJsonPointer, withIndices, type JsonPath } from './path.js';
import type { Issue, PlanError } from './planError.js';
import type { RawPlan } from './raw.js';
import { schemaErrors } from './schema.js';
import { schemaIssues } from './schemaMessages.js';
import { semanticIssues } from './semantic.js';
import type { Plan } from './types.js';
import { parseYaml } from './yamlSource.js';

/**
 * `errors` on failure: the first MAX_REPORTED_ERRORS found, in text order; `moreErrors`: how many
 * more the file has. `text` is the file's text when it could be read, for showing source lines.
 */
export type LoadResult =
  { ok: true; plan: Plan } | { ok: false; errors: PlanError[]; moreErrors: number; text?: string };

/** Plans are small; anything over 1 MiB is refused before it is parsed. */
export const MAX_PLAN_BYTES = 1024 * 1024;

/**
 * Errors reported per file. A hostile plan can hold tens of thousands of mistakes; a person reads
 * the first few, and building a message (with its "did you mean") per mistake would cost seconds.
 */
export const MAX_REPORTED_ERRORS = 100;

/** ajv keywords about an object's fields (missing, unknown, exclusive): the values present are fine. */
const STRUCTURAL = new Set(['required', 'additionalProperties', 'oneOf', 'anyOf', 'uniqueItems']);

/** A failure with `errors` sorted and cut to MAX_REPORTED_ERRORS; `uncounted`: errors found but never built. */
function fail(errors: PlanError[], text?: string, uncounted = 0): LoadResult {
  const shown = errors.sort(byPosition).slice(0, MAX_REPORTED_ERRORS);
  const moreErrors = errors.length - shown.length + uncounted;
  return text === undefined ? { ok: false, errors: shown, moreErrors } : { ok: false, errors: shown, moreErrors, text };
}

function wholeFile(code: PlanErrorCode, file: string, message: string, line = 1): PlanError {
  return { code, message, pos: { file, line, col: line === 0 ? 0 : 1, path: '' } };
}

function tooBig(file: string, bytes: number): PlanError {
  const mib = (bytes / MAX_PLAN_BYTES).toFixed(1);
  return wholeFile('PLAN_TOO_LARGE', file, `expected a plan file of at most 1 MiB, found ${mib} MiB (${bytes} bytes)`);
}

function byPosition(a: PlanError, b: PlanError): number {
  return a.pos.line - b.pos.line || a.pos.col - b.pos.col;
}

/** Messages quote what they found; a hostile plan's megabyte value must not make a megabyte message. */
const MAX_MESSAGE = 1000;

function located(file: string, doc: Document, lineCounter: LineCounter, text: string, iss: Issue): PlanError {
  const { line, col } = lineCounter.linePos(offsetOf(doc, text, iss.path, iss.anchor, iss.offset));
  const message = iss.message.length > MAX_MESSAGE ? `${iss.message.slice(0, MAX_MESSAGE)}…` : iss.message;
  return { code: iss.code, message, pos: { file, line, col, path: formatPath(iss.path) } };
}

/** Loads plan text; `file` names it in errors and in `plan.source`. Pure: no I/O. */
export function loadPlanText(text: string, file: string): LoadResult {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_PLAN_BYTES) return fail([tooBig(file, bytes)]);
  if (text.trim() === '') return fail([wholeFile('PLAN_EMPTY', file, 'expected a RolloutPlan, found an empty file')]);

  const parsed = parseYaml(text);
  if (!parsed.ok) {
    const errors = parsed.problems.map(({ offset, path, message, tooLarge }) => {
      const { line, col } = parsed.lineCounter.linePos(offset);
      const pos = { file, line, col, path: formatPath(path) };
      return { code: tooLarge ? 'PLAN_TOO_LARGE' : 'PLAN_YAML', message, pos } satisfies PlanError;
    });
    return fail(errors, text);
  }
  const { doc, lineCounter, value } = parsed.source;
  if (value === null || value === undefined) {
    return fail(
      [
        wholeFile(
          'PLAN_EMPTY',
          file,
          `expected a RolloutPlan mapping, found ${describeValue(value)} (the file holds only comments)`,
        ),
      ],
      text,
    );
  }

  const ajvErrors: ErrorObject[] = schemaErrors(value);
  const badValues: JsonPath[] = ajvErrors
    .filter((e) => !STRUCTURAL.has(e.keyword))
    .map((e) => fromJsonPointer(e.instancePath));
  const fromSchema = schemaIssues(ajvErrors, MAX_REPORTED_ERRORS);
  const issues = [
    ...fromSchema.issues.map((iss) => ({ ...iss, path: withIndices(value, iss.path) })),
    ...semanticIssues(value, badValues),
  ];
  if (issues.length > 0)
    return fail(
      issues.map((iss) => located(file, doc, lineCounter, text, iss)),
      text,
      fromSchema.more,
    );

  // Schema and checks passed: the value has the RawPlan shape.
  return { ok: true, plan: normalizePlan(value as RawPlan, { file, text }) };
}

/** Reads and loads a plan file. Unreadable, oversized and non-UTF-8 files are errors, not throws. */
export async function loadPlanFile(file: string): Promise<LoadResult> {
  let bytes: Buffer;
  try {
    const info = await stat(file);
    if (!info.isFile())
      return fail([wholeFile('PLAN_UNREADABLE', file, 'expected a plan file, found a directory or special file', 0)]);
    if (info.size > MAX_PLAN_BYTES) return fail([tooBig(file, info.size)]);
    bytes = await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : err instanceof Error
            ? err.message
            : String(err);
    return fail([wholeFile('PLAN_UNREADABLE', file, `expected a readable plan file, found ${why}`, 0)]);
  }
  if (bytes.length > MAX_PLAN_BYTES) return fail([tooBig(file, bytes.length)]);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail([wholeFile('PLAN_UNREADABLE', file, 'expected UTF-8 text, found bytes that are not UTF-8')]);
  }
  return loadPlanText(text, file);
}
