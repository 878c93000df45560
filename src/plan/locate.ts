// From JSON paths to places in the YAML text, and back. Positions come from the parsed YAML
// nodes (`range[0]` is where a node starts), so every error can name a line and column.
import { isAlias, isMap, isScalar, isSeq, type Document, type Node } from 'yaml';
import type { JsonPath, Segment } from './path.js';
import type { Anchor } from './planError.js';

/** Text of a mapping key as the JS value sees it (`toJS` turns keys into strings). */
export function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

function resolve(doc: Document, node: unknown): unknown {
  // An alias points at its anchor's node; the anchor is where the value is written.
  return isAlias(node) ? node.resolve(doc) : node;
}

/** A value written as nothing (`key:` with no value) has no text of its own to point at. */
function isEmptyNull(node: unknown): boolean {
  return isScalar(node) && node.value === null && (!node.range || node.range[0] === node.range[1]);
}

function startOf(node: unknown): number | undefined {
  const range = (node as Node | null)?.range;
  return range ? range[0] : undefined;
}

/**
 * Offset in the text the issue should point at. Walks `path` as far as the document allows and
 * falls back to the deepest node reached (a value that is missing points at its mapping).
 * `offsetInValue` moves inside a one-line string scalar written without escapes.
 */
export function offsetOf(doc: Document, text: string, path: JsonPath, anchor: Anchor, offsetInValue?: number): number {
  const steps = anchor === 'parent' ? path.slice(0, -1) : path;
  let node: unknown = doc.contents;
  let keyNode: unknown;
  let best = startOf(node) ?? 0;
  let complete = true;

  for (const seg of steps) {
    node = resolve(doc, node);
    let next: unknown;
    let nextKey: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(seg));
      if (!pair) {
        complete = false;
        break;
      }
      nextKey = pair.key;
      next = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(seg)];
      if (item === undefined) {
        complete = false;
        break;
      }
      next = item;
    } else {
      complete = false;
      break;
    }
    node = next;
    keyNode = nextKey;
    const at = isEmptyNull(next) ? startOf(nextKey) : (startOf(next) ?? startOf(nextKey));
    if (at !== undefined) best = at;
  }

  if (!complete) return best;
  // A missing field points at the key of the mapping that lacks it (`spec:`), not inside it.
  if ((anchor === 'key' || anchor === 'parent') && keyNode !== undefined) return startOf(keyNode) ?? best;
  if (offsetInValue !== undefined && isScalar(node) && typeof node.value === 'string' && node.range) {
    const written = text.slice(node.range[0], node.range[1]);
    if (node.type === 'PLAIN' && written === node.value) return best + offsetInValue;
    const quote = node.type === 'QUOTE_DOUBLE' ? '"' : node.type === 'QUOTE_SINGLE' ? "'" : undefined;
    if (quote && written === quote + node.value + quote) return best + 1 + offsetInValue;
  }
  return best;
}

/** Path of the deepest key or value whose text contains `offset`; keys win over their values. */
export function pathAtOffset(doc: Document, offset: number): Segment[] {
  const path: Segment[] = [];
  const contains = (n: unknown) => {
    const r = (n as Node | null)?.range;
    return !!r && r[0] <= offset && offset < Math.max(r[2], r[0] + 1);
  };
  let node: unknown = doc.contents;
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.find((p) => contains(p.key) || contains(p.value));
      if (!pair) return path;
      path.push(keyText(pair.key));
      if (contains(pair.key)) return path;
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findIndex((item) => contains(item));
      if (index < 0) return path;
      path.push(index);
      node = node.items[index];
    } else {
      return path;
    }
  }
}
