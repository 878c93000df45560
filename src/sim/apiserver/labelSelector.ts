// Label selectors in their string form (`app=web,tier in (a,b),!canary`), parsed once per request
// and matched against each object's labels. Equality-based (`=`, `==`, `!=`) and set-based (`in`,
// `notin`, `key`, `!key`) requirements, plus the numeric `>` / `<` the string form also allows.
import { labelValueError, qualifiedNameError } from './validation/names.js';

type LabelOperator = 'exists' | 'notExists' | 'equals' | 'notEquals' | 'in' | 'notIn' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOperator;
  values: string[];
}

export type LabelSelector = LabelRequirement[];

export class SelectorParseError extends Error {
  override name = 'SelectorParseError';
}

type Token = { kind: 'id'; text: string } | { kind: 'sym'; text: string } | { kind: 'end' };

const SYMBOLS = ['==', '!=', '=', '!', '>', '<', ',', '(', ')'];
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    const sym = SYMBOLS.find((s) => input.startsWith(s, i));
    if (sym) {
      tokens.push({ kind: 'sym', text: sym });
      i += sym.length;
      continue;
    }
    let j = i;
    while (j < input.length && !isSpace(input[j]!) && !'=!><,()'.includes(input[j]!)) j++;
    tokens.push({ kind: 'id', text: input.slice(i, j) });
    i = j;
  }
  tokens.push({ kind: 'end' });
  return tokens;
}

const describe = (t: Token) => (t.kind === 'end' ? 'end of string' : `'${t.text}'`);

/** Parses a label selector; throws SelectorParseError with a message for a 400. */
export function parseLabelSelector(input: string): LabelSelector {
  const tokens = tokenize(input);
  let pos = 0;
  const peek = () => tokens[pos]!;
  const next = () => tokens[pos++]!;
  const fail = (msg: string): never => {
    throw new SelectorParseError(`unable to parse requirement: ${msg}`);
  };
  const requirements: LabelRequirement[] = [];
  if (peek().kind === 'end') return requirements;

  for (;;) {
    let negated = false;
    const first = peek();
    if (first.kind === 'sym' && first.text === '!') {
      next();
      negated = true;
    }
    const keyTok = next();
    if (keyTok.kind !== 'id') fail(`found ${describe(keyTok)}, expected: identifier`);
    const key = (keyTok as { text: string }).text;
    const keyErr = qualifiedNameError(key);
    if (keyErr) fail(`invalid label key "${key}": ${keyErr}`);
    let req: LabelRequirement;
    const t = peek();
    if (negated) {
      req = { key, op: 'notExists', values: [] };
    } else if (t.kind === 'end' || (t.kind === 'sym' && t.text === ',')) {
      req = { key, op: 'exists', values: [] };
    } else if (t.kind === 'id' && (t.text === 'in' || t.text === 'notin')) {
      next();
      const open = next();
      if (open.kind !== 'sym' || open.text !== '(') fail(`found ${describe(open)}, expected: '('`);
      const values: string[] = [];
      const afterOpen = peek();
      if (afterOpen.kind === 'sym' && afterOpen.text === ')') {
        next();
        fail(`for 'in', 'notin' operators, values set can't be empty`);
      }
      for (;;) {
        // A member may be empty, as in `in (a,)`: the empty string.
        const v = peek();
        if (v.kind === 'id') next();
        values.push(v.kind === 'id' ? v.text : '');
        const sep = next();
        if (sep.kind === 'sym' && sep.text === ')') break;
        if (sep.kind !== 'sym' || sep.text !== ',') fail(`found ${describe(sep)}, expected: ',' or ')'`);
      }
      req = { key, op: t.text === 'in' ? 'in' : 'notIn', values };
    } else if (t.kind === 'sym' && ['=', '==', '!=', '>', '<'].includes(t.text)) {
      next();
      const v = peek();
      let value = '';
      if (v.kind === 'id') {
        value = v.text;
        next();
      } else if (!(v.kind === 'end' || (v.kind === 'sym' && v.text === ',')))
        fail(`found ${describe(v)}, expected: identifier`);
      const op: LabelOperator =
        t.text === '!=' ? 'notEquals' : t.text === '>' ? 'gt' : t.text === '<' ? 'lt' : 'equals';
      if ((op === 'gt' || op === 'lt') && !/^-?\d+$/.test(value))
        fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
      req = { key, op, values: [value] };
    } else {
      fail(`found ${describe(t)}, expected: in, notin, =, ==, !=, gt, lt`);
      throw new Error('unreachable');
    }
    if (req.op !== 'gt' && req.op !== 'lt') {
      for (const v of req.values) {
        const err = labelValueError(v);
        if (err) fail(`invalid label value: "${v}": at key: "${key}": ${err}`);
      }
    }
    requirements.push(req);
    const sep = next();
    if (sep.kind === 'end') break;
    if (sep.kind !== 'sym' || sep.text !== ',') fail(`found ${describe(sep)}, expected: ','`);
  }
  return requirements;
}

function matchesOne(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  switch (r.op) {
    case 'exists':
      return has;
    case 'notExists':
      return !has;
    case 'equals':
      return has && v === r.values[0];
    case 'notEquals':
      return !has || v !== r.values[0];
    case 'in':
      return has && r.values.includes(v!);
    case 'notIn':
      return !has || !r.values.includes(v!);
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(v!)) return false;
      const n = Number(v);
      const bound = Number(r.values[0]);
      return r.op === 'gt' ? n > bound : n < bound;
    }
  }
}

/** True when every requirement holds (an empty selector matches everything). */
export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  return selector.every((r) => matchesOne(r, l));
}
