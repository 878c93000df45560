// From JSON paths to places in the YAML text, and back. Positions come from the parsed YAML
// nodes (`range[0]` is where a node starts), so every error can name a line and column.
import { isAlias, isMap, isScalar, isSeq, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import type { JsonPath, Segment } from './path.js';
import type { Anchor } from './planError.js';

/** Text of a mapping key as the JS value sees it (`toJS` turns keys into strings). */
export function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

/** Each mapping's pairs by key text, built once per mapping: a search per error would be quadratic. */
const pairsByKey = new WeakMap<YAMLMap, Map<string, Pair>>();

function pairOf(map: YAMLMap, key: string): Pair | undefined {
  let index = pairsByKey.get(map);
  if (!index) {
    index = new Map();
    // The first pair of a key wins, as a search from the top would find it.
    for (const pair of map.items as Pair[]) {
      const text = keyText(pair.key);
      if (!index.has(text)) index.set(text, pair);
    }
    pairsByKey.set(map, index);
  }
  return index.get(key);
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
      const pair = pairOf(node as YAMLMap, String(seg));
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
      const items = node.items as Pair[];
      const index = itemAt(
        items,
        offset,
        (p) => startOf(p.key) ?? startOf(p.value),
        (p) => contains(p.key) || contains(p.value),
      );
      const pair = items[index];
      if (!pair) return path;
      path.push(keyText(pair.key));
      if (contains(pair.key)) return path;
      node = pair.value;
    } else if (isSeq(node)) {
      const index = itemAt(node.items, offset, startOf, contains);
      if (index < 0) return path;
      path.push(index);
      node = node.items[index];
    } else {
      return path;
    }
  }
}

/**
 * Index of the item that holds `offset`, or -1. Items are in text order, so bisection on where each
 * starts finds the one candidate: many errors in a wide mapping stay cheap. An item without a
 * place (none in parsed text) falls back to a search from the top.
 */
function itemAt<T>(
  items: readonly T[],
  offset: number,
  startOfItem: (item: T) => number | undefined,
  holds: (item: T) => boolean,
): number {
  let lo = 0;
  let hi = items.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const start = startOfItem(items[mid] as T);
    if (start === undefined) return items.findIndex(holds);
    if (start <= offset) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && holds(items[found] as T) ? found : -1;
}
