// The order in which selected pods are upgraded. Pure and deterministic: the same pods give the
// same order whatever order they were listed in, so a resumed run walks the fleet the same way.
import type { Order } from '../plan/types.js';

/** What ordering needs to know about a pod. `node`/`zone` are absent for unscheduled pods. */
export interface PodPlacement {
  namespace: string;
  name: string;
  node?: string;
  zone?: string;
}

const CHUNK = /(\d+)|(\D+)/g;

/**
 * Natural string order: runs of digits compare as numbers, everything else by code point
 * (not by locale, so the result never depends on the machine). `web-2` < `web-10` < `web-10a`.
 * Numbers compare by value at any length (`n-99999999999999999999` < `n-100000000000000000000`);
 * equal values with different zero padding (`web-01`, `web-1`) fall back to plain code-point
 * order, so the order is total.
 */
export function naturalCompare(a: string, b: string): number {
  return compareChunked(chunked(a), chunked(b));
}

/** A string with its runs of digits and of everything else, cut once for many comparisons. */
interface Chunked {
  text: string;
  chunks: string[];
}

function chunked(text: string): Chunked {
  return { text, chunks: text.match(CHUNK) ?? [] };
}

function compareChunked(a: Chunked, b: Chunked): number {
  const ca = a.chunks;
  const cb = b.chunks;
  const n = Math.min(ca.length, cb.length);
  for (let i = 0; i < n; i++) {
    const x = ca[i] as string;
    const y = cb[i] as string;
    if (x === y) continue;
    const xDigits = isDigits(x);
    const yDigits = isDigits(y);
    if (xDigits && yDigits) {
      const byValue = compareDigitRuns(x, y);
      if (byValue !== 0) return byValue;
      continue; // same value, different padding: decided by the tie-break below
    }
    return codePointCompare(x, y);
  }
  if (ca.length !== cb.length) return ca.length - cb.length;
  return codePointCompare(a.text, b.text);
}

function isDigits(s: string): boolean {
  const c = s.charCodeAt(0);
  return c >= 48 && c <= 57;
}

function compareDigitRuns(x: string, y: string): number {
  const xs = x.replace(/^0+/, '');
  const ys = y.replace(/^0+/, '');
  if (xs.length !== ys.length) return xs.length - ys.length;
  return codePointCompare(xs, ys);
}

function codePointCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * naturalCompare's order (the same sign for every pair), read off the two strings in place: no
 * chunks are cut, so sorting 50,000 pods makes no garbage (cutting each name once was 1.1 KB of
 * garbage a pod, at the end of `kwave plan`, where its memory peaks).
 */
export function naturalCompareInPlace(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const xDigits = isDigitAt(a, i);
    const yDigits = isDigitAt(b, j);
    const xStart = i;
    const yStart = j;
    i = runEnd(a, i, xDigits);
    j = runEnd(b, j, yDigits);
    if (xDigits && yDigits) {
      // By value: without leading zeros, the longer run is the larger; equal lengths compare as text.
      let xs = xStart;
      let ys = yStart;
      while (xs < i && a.charCodeAt(xs) === 48) xs++;
      while (ys < j && b.charCodeAt(ys) === 48) ys++;
      if (i - xs !== j - ys) return i - xs - (j - ys);
      const byValue = compareRange(a, xs, i, b, ys, j);
      if (byValue !== 0) return byValue;
      continue; // same value, perhaps different padding: decided by the tie-break below
    }
    const byText = compareRange(a, xStart, i, b, yStart, j);
    if (byText !== 0) return byText;
  }
  if (i < a.length) return 1; // a has more chunks
  if (j < b.length) return -1;
  return codePointCompare(a, b);
}

function isDigitAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/** Where the run of digits (or of non-digits) starting at `i` ends. */
function runEnd(s: string, i: number, digits: boolean): number {
  let k = i + 1;
  while (k < s.length && isDigitAt(s, k) === digits) k++;
  return k;
}

/** a[aFrom, aTo) against b[bFrom, bTo) by UTF-16 code units, as `<` compares strings. */
function compareRange(a: string, aFrom: number, aTo: number, b: string, bFrom: number, bTo: number): number {
  const n = Math.min(aTo - aFrom, bTo - bFrom);
  for (let k = 0; k < n; k++) {
    const d = a.charCodeAt(aFrom + k) - b.charCodeAt(bFrom + k);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return Math.sign(aTo - aFrom - (bTo - bFrom));
}

/**
 * Pods in upgrade order.
 * - `name`: namespace, then name (natural).
 * - `spread-nodes` / `spread-zones`: pods grouped by node / zone, each group in name order, the
 *   groups in natural order of their node / zone name (pods with none form one group, last); then
 *   round-robin: the first pod of every group, then the second of every group, and so on. Any
 *   prefix of the result (a wave) touches as many nodes / zones as it can.
 *
 * Worked example, `spread-zones` with zones a: [p1, p4], b: [p2], c: [p3, p5, p6]:
 * p1 p2 p3 p4 p5 p6 → round 1 a,b,c = p1 p2 p3; round 2 a,c = p4 p5; round 3 c = p6.
 * A wave of 3 pods touches all 3 zones.
 */
export function orderPods<T extends PodPlacement>(pods: readonly T[], order: Order): T[] {
  const byName = [...pods].sort(
    (x, y) => naturalCompareInPlace(x.namespace, y.namespace) || naturalCompareInPlace(x.name, y.name),
  );
  if (order === 'name') return byName;
  const groupOf = order === 'spread-nodes' ? (p: T) => p.node : (p: T) => p.zone;
  return roundRobin(byName, groupOf);
}

function roundRobin<T>(sorted: readonly T[], groupOf: (p: T) => string | undefined): T[] {
  const groups = new Map<string, T[]>();
  const ungrouped: T[] = [];
  for (const pod of sorted) {
    const key = groupOf(pod);
    if (key === undefined || key === '') {
      ungrouped.push(pod);
      continue;
    }
    const members = groups.get(key);
    if (members) members.push(pod);
    else groups.set(key, [pod]);
  }
  const lanes = [...groups.keys()].sort(naturalCompare).map((k) => groups.get(k) as T[]);
  if (ungrouped.length > 0) lanes.push(ungrouped);

  const out: T[] = [];
  const longest = Math.max(0, ...lanes.map((l) => l.length));
  for (let round = 0; round < longest; round++) {
    for (const lane of lanes) {
      const pod = lane[round];
      if (pod !== undefined) out.push(pod);
    }
  }
  return out;
}
