// Field selectors (`spec.nodeName=n1,status.phase!=Running`): equality on the few fields each
// resource indexes. Values may escape `\`, `,` and `=` with a backslash, as in the real syntax.
import type { KubeObject } from '../store.js';
import { SelectorParseError } from './labelSelector.js';

interface FieldRequirement {
  field: string;
  op: 'equals' | 'notEquals';
  value: string;
}

export type FieldSelector = FieldRequirement[];

/** Splits on `sep` where it is not escaped with a backslash. */
function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1]!;
      i++;
    } else if (c === sep) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/**
 * Parses a field selector and checks its fields against those the resource supports (`fields`);
 * throws SelectorParseError for a 400.
 */
export function parseFieldSelector(input: string, supported: Readonly<Record<string, unknown>>): FieldSelector {
  if (input.trim() === '') return [];
  return splitUnescaped(input, ',').map((term) => {
    const m = /^(.*?)(!=|==|=)(.*)$/s.exec(term);
    if (!m || m[1]!.trim() === '')
      throw new SelectorParseError(`invalid selector: '${input}'; can't understand '${term}'`);
    const field = m[1]!.trim();
    if (!Object.prototype.hasOwnProperty.call(supported, field))
      throw new SelectorParseError(`field label not supported: ${field}`);
    return { field, op: m[2] === '!=' ? 'notEquals' : 'equals', value: unescape(m[3]!) } satisfies FieldRequirement;
  });
}

export function matchesFields(
  selector: FieldSelector,
  obj: KubeObject,
  getters: Readonly<Record<string, (o: KubeObject) => string>>,
): boolean {
  return selector.every((r) => {
    const actual = getters[r.field]!(obj);
    return r.op === 'equals' ? actual === r.value : actual !== r.value;
  });
}
