// Small helpers over plain JSON values, shared by patches, validation and serialization.
import { RecentMap } from './recentMap.js';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A deep, mutable copy of a JSON value (stored objects are frozen); cheaper than structuredClone. */
export function clone<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(clone) as T;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) out[k] = clone((value as Record<string, unknown>)[k]);
  return out as T;
}

/** Structural equality of JSON values; key order does not matter, `undefined` members are absent. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => deepEqual(v, b[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  return ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && deepEqual(ao[k], bo[k]));
}

/**
 * Formats a value the way Go's `%v` prints decoded JSON (`map[image:x name:y]`, `[a b]`), because
 * some API server messages embed values printed like that.
 */
export function goFormat(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goFormat).join(' ')}]`;
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const parts = Object.keys(o)
      .sort()
      .map((k) => `${k}:${goFormat(o[k])}`);
    return `map[${parts.join(' ')}]`;
  }
  return String(value);
}

/**
 * Texts of objects sent lately in a watch event or an answer: a write's watch events (one per
 * watcher) and its answer share one text, made in the same turn. Not kept longer: most versions
 * are sent once.
 */
const recentJson = new RecentMap<object, string>(1024);
/** The text of frozen specs, lately: a pod's status writes that follow a spec change share its text. */
const specJson = new RecentMap<object, string>(4096);

/**
 * JSON text of a stored object (the same bytes as JSON.stringify: members in order, undefined
 * ones left out). Stored snapshots are frozen, so a text made for a watch event or an answer is
 * kept a short while for the others that send the same version (recentJson), and a new snapshot
 * reuses the text of the spec it shares with the one before. A list's items are encoded anew each
 * time and not kept, as kube-apiserver does: keeping every listed pod's text until it changed
 * would cost the simulator ~190 MB at 50,000 pods listed once and double its first list's CPU
 * (1.8 s against 0.9 s), more than it would save on each later list (about 0.25 s).
 */
export function frozenJson(obj: object, sent: 'list' | 'other' = 'other'): string {
  if (!Object.isFrozen(obj) || Array.isArray(obj)) return JSON.stringify(obj);
  let text = recentJson.get(obj);
  if (text !== undefined) return text;
  if (sent === 'list') return JSON.stringify(obj);
  const spec = (obj as { spec?: unknown }).spec;
  text =
    typeof spec === 'object' && spec !== null && Object.isFrozen(spec)
      ? withSpecText(obj as Record<string, unknown>, spec)
      : JSON.stringify(obj);
  recentJson.set(obj, text);
  return text;
}

/**
 * The text in three pieces: the members before the spec, the spec's shared text, the members
 * after it; the first and the last joined, not concatenated: V8 keeps a concatenation as a tree
 * of all its pieces (~1 KB of them a pod) for as long as the text lives.
 */
function withSpecText(obj: Record<string, unknown>, spec: object): string {
  let specText = specJson.get(spec);
  if (specText === undefined) specJson.set(spec, (specText = JSON.stringify(spec)));
  const head = ['{'];
  const tail: string[] = [];
  let afterSpec = false;
  for (const k of Object.keys(obj)) {
    if (k === 'spec') {
      afterSpec = true;
      continue;
    }
    const member = JSON.stringify(obj[k]);
    if (member === undefined) continue; // undefined, functions: left out, as JSON.stringify does
    if (afterSpec) tail.push(',', JSON.stringify(k), ':', member);
    else head.push(JSON.stringify(k), ':', member, ',');
  }
  head.push('"spec":');
  tail.push('}');
  return head.join('') + specText + tail.join('');
}

/** Reads `a.b.c` from an object, or undefined. */
export function getPath(obj: unknown, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const p of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}
