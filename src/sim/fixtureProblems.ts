// A fixture's problems, from the schema (ajv's errors) or from the checks the schema cannot make,
// turned into one KwaveError (FIXTURE, exit 2) that points at file:line:col of the first and
// lists the rest.
import type { ErrorObject } from 'ajv/dist/2020.js';
import { isMap, isPair, isScalar, type Document, type LineCounter, type Node as YamlNode } from 'yaml';
import { ExitCode, KwaveError } from '../errors.js';

export interface Problem {
  path: (string | number)[];
  message: string;
  /** Point at this key of the map at `path` rather than at the value. */
  key?: string;
}

/**
 * ajv's errors as problems. A `oneOf` reports every branch's failure: where one branch failed
 * deeper inside the value (the author meant that branch), only those deeper errors are kept;
 * otherwise the branches collapse into one "expected A or B".
 */
export function problemsOf(errors: ErrorObject[]): Problem[] {
  const dropped = new Set<ErrorObject>();
  const extra: Problem[] = [];
  for (const o of errors.filter((e) => e.keyword === 'oneOf')) {
    const branch = errors.filter((e) => e !== o && e.schemaPath.startsWith(`${o.schemaPath}/`));
    // A wrong type or constant says the branch did not fit; an unknown or missing field inside says it did.
    const shallow = branch.filter(
      (e) => e.instancePath === o.instancePath && ['type', 'const', 'enum'].includes(e.keyword),
    );
    dropped.add(o);
    for (const e of shallow) dropped.add(e);
    if (shallow.length === branch.length || branch.length === 0) {
      const p = problemOf(o);
      const expected = shallow.map((e) => problemOf(e).message.replace(/^.*?: /, '')).join(', or ');
      extra.push({ ...p, message: `${p.path.length ? p.path.join('.') : 'the fixture'}: ${expected}` });
    }
  }
  return [...errors.filter((e) => !dropped.has(e)).map(problemOf), ...extra];
}

function problemOf(e: ErrorObject): Problem {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const at = path.length ? path.join('.') : 'the fixture';
  switch (e.keyword) {
    case 'additionalProperties': {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty);
      return { path, key: extra, message: `unknown field "${extra}" in ${at}` };
    }
    case 'required':
      return {
        path,
        message: `${at}: missing required field "${(e.params as { missingProperty: string }).missingProperty}"`,
      };
    case 'enum':
      return {
        path,
        message: `${at}: expected one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'type': {
      const t = String((e.params as { type: string }).type);
      const names: Record<string, string> = {
        object: 'a mapping',
        array: 'a list',
        string: 'a string',
        number: 'a number',
        integer: 'an integer',
        boolean: 'true or false',
      };
      return { path, message: `${at}: expected ${names[t] ?? t}` };
    }
    case 'const':
      return {
        path,
        message: `${at}: expected ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`,
      };
    default:
      return { path, message: `${at}: ${e.message ?? 'invalid'}` };
  }
}

export function toError(doc: Document, lineCounter: LineCounter, file: string, problems: Problem[]): KwaveError {
  // oneOf reports each branch's failure too; keep the most specific (deepest) problems first.
  const sorted = [...problems].sort((a, b) => b.path.length - a.path.length);
  const seen = new Set<string>();
  const located = sorted
    .map((p) => ({ p, pos: position(doc, lineCounter, p) }))
    .filter(({ p }) => {
      const k = p.message;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col);
  const [first, ...rest] = located;
  const more = rest.map(({ p, pos }) => `\n${file}:${pos.line}:${pos.col} ${p.message}`).join('');
  return new KwaveError('FIXTURE', `${first!.p.message}${more}`, ExitCode.BAD_INPUT, {
    file,
    line: first!.pos.line,
    col: first!.pos.col,
    path: first!.p.path.join('.'),
  });
}

function position(doc: Document, lineCounter: LineCounter, p: Problem): { line: number; col: number } {
  let node = doc.getIn(p.path, true) as YamlNode | undefined;
  // Walk up to the nearest ancestor that exists (e.g. for a missing field).
  for (let n = p.path.length; !node && n > 0; n--)
    node = doc.getIn(p.path.slice(0, n - 1), true) as YamlNode | undefined;
  node ??= doc.contents ?? undefined;
  let offset = node?.range?.[0] ?? 0;
  if (p.key !== undefined && node && isMap(node)) {
    const pair = node.items.find((it) => isPair(it) && isScalar(it.key) && String(it.key.value) === p.key);
    const keyNode = pair && isScalar(pair.key) ? pair.key : undefined;
    if (keyNode?.range) offset = keyNode.range[0];
  }
  const { line, col } = lineCounter.linePos(offset);
  return { line, col };
}
