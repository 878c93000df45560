// JSON paths inside a plan: segments for walking, a dotted form for people.

/** One step into a document: a mapping key or a list index. */
export type Segment = string | number;
export type JsonPath = readonly Segment[];

import { quoted } from './describe.js';

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * `['spec', 'gates', 0, 'name']` → `spec.gates[0].name`. Keys that are not plain words (label
 * keys such as `app.kubernetes.io/name`) are quoted in brackets so the path stays unambiguous.
 */
export function formatPath(path: JsonPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (PLAIN_KEY.test(seg) && seg.length <= 60) out += out === '' ? seg : `.${seg}`;
    else out += `[${quoted(seg)}]`;
  }
  return out;
}

/**
 * ajv's `instancePath` (a JSON pointer such as `/spec/waves/1`) → segments; indices stay strings.
 * Called once per schema error, tens of thousands of times for a hostile plan: most segments hold
 * no escape, and are taken as they are.
 */
export function fromJsonPointer(pointer: string): Segment[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => (s.includes('~') ? s.replace(/~1/g, '/').replace(/~0/g, '~') : s));
}

/** Turns index segments that arrive as strings (ajv's) into numbers, by looking at `root`. */
export function withIndices(root: unknown, path: readonly Segment[]): Segment[] {
  const out: Segment[] = [];
  let node: unknown = root;
  for (const seg of path) {
    if (Array.isArray(node)) {
      const i = Number(seg);
      out.push(i);
      node = node[i];
    } else {
      out.push(seg);
      node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[String(seg)] : undefined;
    }
  }
  return out;
}
