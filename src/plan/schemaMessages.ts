// ajv's errors → issues in plain words: "expected X, found Y", each with the path it is about and
// where in the text it should point. One function per keyword the plan schema uses.
import type { ErrorObject } from 'ajv/dist/2020.js';
import { describeValue, oneOfList, quoted } from './describe.js';
import { fromJsonPointer, type Segment } from './path.js';
import type { Issue } from './planError.js';
import { closestName } from './suggest.js';

type SchemaNode = Record<string, unknown>;

const TYPE_WORDS: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  null: 'nothing',
};

function schemaOf(err: ErrorObject): SchemaNode {
  return (err.parentSchema ?? {}) as SchemaNode;
}

/** The schema's own words for what a value must look like, if it has them. */
function expectedWords(err: ErrorObject): string | undefined {
  const words = schemaOf(err)['x-expected'];
  return typeof words === 'string' ? words : undefined;
}

/** The property names a oneOf/anyOf of `{required: [name]}` branches stands for, if it is one. */
function requiredAlternatives(err: ErrorObject): string[] | undefined {
  const branches = schemaOf(err)[err.keyword];
  if (!Array.isArray(branches)) return undefined;
  const names: string[] = [];
  for (const b of branches as SchemaNode[]) {
    const req = b.required;
    if (Object.keys(b).length !== 1 || !Array.isArray(req) || req.length !== 1) return undefined;
    names.push(String(req[0]));
  }
  return names;
}

function typeWords(type: unknown): string {
  const types = Array.isArray(type) ? type : String(type).split(',');
  return types.map((t) => TYPE_WORDS[String(t)] ?? String(t)).join(' or ');
}

/** A hint when the value has the right content in the wrong form, e.g. `"5"` where 5 is wanted. */
function typeHint(err: ErrorObject): string {
  const want = String((err.params as { type?: unknown }).type);
  if (typeof err.data === 'string' && /^-?[0-9]+(\.[0-9]+)?$/.test(err.data) && /integer|number/.test(want)) {
    return ' (write the number without quotes)';
  }
  if (typeof err.data === 'number' && want === 'string' && !expectedWords(err))
    return ' (quote it to make it a string)';
  return '';
}

const items = (n: unknown) => `${String(n)} item${n === 1 ? '' : 's'}`;

/** Undefined for errors that only repeat another (see the oneOf case). */
function translate(err: ErrorObject): Issue | undefined {
  const path: Segment[] = fromJsonPointer(err.instancePath);
  // Described only where a message quotes it: describing a wide mapping costs its width, per error.
  const found = () => describeValue(err.data);
  const expected = (fallback: string) => expectedWords(err) ?? fallback;
  const params = err.params as Record<string, unknown>;

  switch (err.keyword) {
    case 'type':
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected ${expected(typeWords(params.type))}, found ${found()}${typeHint(err)}`,
      };
    case 'const':
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected ${JSON.stringify(params.allowedValue)}, found ${found()}`,
      };
    case 'enum':
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected one of ${oneOfList(params.allowedValues as unknown[])}, found ${found()}`,
      };
    case 'pattern':
    case 'format':
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected ${expected('a value of the documented form')}, found ${found()}`,
      };
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum': {
      const bound = `${params.comparison as string} ${String(params.limit)}`;
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected ${expected(`a number ${bound}`)}, found ${found()}`,
      };
    }
    case 'minLength':
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected ${expected(`at least ${String(params.limit)} characters`)}, found ${found()}`,
      };
    case 'maxLength':
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected ${expected(`at most ${String(params.limit)} characters`)}, found ${(err.data as string).length} characters`,
      };
    case 'minItems':
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected a list of at least ${items(params.limit)}, found ${found()}`,
      };
    case 'maxItems':
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected a list of at most ${items(params.limit)}, found ${items((err.data as unknown[]).length)}`,
      };
    case 'uniqueItems': {
      // ajv names the two equal items; point at the later one.
      const later = Math.max(Number(params.i), Number(params.j));
      const earlier = Math.min(Number(params.i), Number(params.j));
      const item = (err.data as unknown[])[later];
      return {
        code: 'PLAN_DUPLICATE',
        path: [...path, later],
        anchor: 'value',
        message: `expected no duplicates, found ${describeValue(item)} again (also at [${earlier}])`,
      };
    }
    case 'required': {
      const missing = String(params.missingProperty);
      return {
        code: 'PLAN_MISSING_FIELD',
        path: [...path, missing],
        anchor: 'parent',
        message: `expected the required field "${missing}", found none`,
      };
    }
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const known = Object.keys((schemaOf(err).properties ?? {}) as object);
      const guess = closestName(name, known);
      const hint = schemaOf(err)['x-unknown-hint'];
      let message = `expected ${known.length === 1 ? 'the field' : 'one of the fields'} ${known.join(', ')}, found unknown field ${quoted(name)}`;
      if (guess) message += ` (did you mean "${guess}"?)`;
      if (typeof hint === 'string') message += `; ${hint}`;
      return { code: 'PLAN_UNKNOWN_FIELD', path: [...path, name], anchor: 'key', message };
    }
    case 'oneOf':
    case 'anyOf': {
      const names = requiredAlternatives(err);
      // Branches like {required: [x]} pass for a value that is no mapping at all; the type error
      // beside this one says what is wrong then.
      if (names && (typeof err.data !== 'object' || err.data === null || Array.isArray(err.data))) return undefined;
      if (names) {
        const present = names.filter((n) => typeof err.data === 'object' && err.data !== null && n in err.data);
        if (present.length > 1) {
          // Point at the second of the clashing keys: the first one was fine on its own.
          return {
            code: 'PLAN_CONFLICT',
            path: [...path, present[1] as string],
            anchor: 'key',
            message:
              names.length === 2
                ? `expected either ${oneOfList(names)}, found both`
                : `expected only one of the fields ${oneOfList(names)}, found ${present.map((n) => JSON.stringify(n)).join(' and ')}`,
          };
        }
        const quantifier = err.keyword === 'oneOf' ? 'one of' : 'at least one of';
        return {
          code: 'PLAN_MISSING_FIELD',
          path,
          anchor: 'value',
          message: `expected ${quantifier} the fields ${oneOfList(names)}, found ${names.length === 2 ? 'neither' : 'none'}`,
        };
      }
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected ${expected('a value of one of the documented forms')}, found ${found()}`,
      };
    }
    default:
      return {
        code: 'PLAN_INVALID_VALUE',
        path,
        anchor: 'value',
        message: `expected a value the schema allows (${err.message ?? err.keyword}), found ${found()}`,
      };
  }
}

/** The issues translated, and how many more there are beyond the limit. */
export interface SchemaIssues {
  issues: Issue[];
  more: number;
}

/**
 * Translates ajv's errors, at most `limit` of them: a hostile plan's fifty thousand unknown keys
 * are counted, not each turned into a message with a "did you mean". The branches of a
 * oneOf/anyOf report their own failures too ("must have required property 'waves'"); those are
 * dropped in favour of the one message about the choice. Identical messages at one path collapse
 * (beyond the limit: identical keyword and parameters at one path, which is what makes them so).
 */
export function schemaIssues(errors: readonly ErrorObject[], limit = Number.POSITIVE_INFINITY): SchemaIssues {
  // The choices by the value they are about, so that each error looks only at the values above it.
  const choices = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    if (e.keyword !== 'oneOf' && e.keyword !== 'anyOf') continue;
    choices.set(e.instancePath, [...(choices.get(e.instancePath) ?? []), e]);
  }
  // Whether an error lies under a choice depends only on where it is and which part of the
  // schema made it (no error lies under itself), and a hostile plan repeats those pairs by the
  // ten thousand: each pair is looked up once.
  const under = new Map<string, Map<string, boolean>>();
  const underChoice = (e: ErrorObject) => {
    if (choices.size === 0) return false;
    let bySchemaPath = under.get(e.instancePath);
    if (!bySchemaPath) under.set(e.instancePath, (bySchemaPath = new Map()));
    let found = bySchemaPath.get(e.schemaPath);
    if (found !== undefined) return found;
    found = false;
    for (let at = e.instancePath; !found; at = at.slice(0, at.lastIndexOf('/'))) {
      found = choices.get(at)?.some((c) => e.schemaPath.startsWith(c.schemaPath + '/')) ?? false;
      if (at === '') break;
    }
    bySchemaPath.set(e.schemaPath, found);
    return found;
  };
  const seen = new Set<string>();
  const issues: Issue[] = [];
  let more = 0;
  for (const err of errors) {
    if (underChoice(err)) continue;
    if (issues.length >= limit) {
      const key = `${err.instancePath}\u0001${err.keyword}\u0001${JSON.stringify(err.params)}`;
      // A choice's message may say nothing (see translate); translating it is cheap.
      const says = (err.keyword !== 'oneOf' && err.keyword !== 'anyOf') || translate(err) !== undefined;
      if (says && !seen.has(key)) more++;
      seen.add(key);
      continue;
    }
    const iss = translate(err);
    if (!iss) continue;
    const key = `${iss.path.join('\u0000')}\u0001${iss.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(iss);
  }
  return { issues, more };
}
