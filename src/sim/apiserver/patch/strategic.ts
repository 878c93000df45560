// Strategic merge patch (`application/strategic-merge-patch+json`): a JSON merge patch that merges
// lists by their merge keys instead of replacing them, with the `$patch`, `$retainKeys`,
// `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` directives.
import { deepEqual, goFormat, isObject, type Json, type JsonObject } from '../json.js';
import { badRequest, unknownInternal } from '../status.js';
import type { PatchSchema } from './schema.js';

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

/** Applies `patch` to `original` (neither is changed); throws ApiError as the real server would. */
export function strategicMerge(original: JsonObject, patch: unknown, schema: PatchSchema): JsonObject {
  if (!isObject(patch)) throw badRequest('Invalid JSON document');
  const merged = mergeMap(original, patch, schema);
  if (merged === DELETE) return {};
  return merged;
}

const DELETE = Symbol('delete');

function directiveOf(map: JsonObject): string | undefined {
  const d = map.$patch;
  if (d === undefined) return undefined;
  if (d !== 'replace' && d !== 'delete' && d !== 'merge')
    throw unknownInternal(`unknown patch type: ${goFormat(d)} in map: ${goFormat(map)}`);
  return d;
}

/** A map as new content: directives removed, null members dropped (nothing to delete from). */
function withoutDirectives(map: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(map)) {
    if (k.startsWith('$') || v === null) continue;
    out[k] = isObject(v) ? withoutDirectives(v) : v;
  }
  return out;
}

function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  schema: PatchSchema | undefined,
): JsonObject | typeof DELETE {
  const directive = directiveOf(patch);
  if (directive === 'delete') return DELETE;
  if (directive === 'replace') return withoutDirectives(patch);

  // A shallow copy: only the levels the patch reaches are copied, the rest (frozen) is shared.
  const result: JsonObject = { ...original };
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    if (v === null) {
      delete result[k];
      continue;
    }
    const fieldSchema = schema?.fields?.[k];
    const current = result[k];
    if (isObject(v)) {
      const merged = mergeMap(isObject(current) ? current : {}, v, fieldSchema);
      if (merged === DELETE) delete result[k];
      else result[k] = merged;
    } else if (Array.isArray(v) && fieldSchema?.strategy === 'merge') {
      result[k] = mergeList(Array.isArray(current) ? current : [], v, fieldSchema);
    } else {
      result[k] = v; // from the parsed patch body, which nothing else holds
    }
  }

  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(DELETE_FROM)) {
      const list = k.slice(DELETE_FROM.length);
      if (!Array.isArray(v)) throw badRequest(`invalid patch: ${DELETE_FROM}${list} must be a list`);
      const current = result[list];
      if (Array.isArray(current)) result[list] = current.filter((item) => !v.some((d) => deepEqual(d, item)));
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(SET_ORDER)) {
      const list = k.slice(SET_ORDER.length);
      if (!Array.isArray(v)) throw badRequest(`invalid patch: ${SET_ORDER}${list} must be a list`);
      const current = result[list];
      if (Array.isArray(current)) result[list] = reorder(current, v, schema?.fields?.[list]?.mergeKey);
    }
  }
  const retain = patch.$retainKeys;
  if (retain !== undefined) {
    if (!Array.isArray(retain) || retain.some((x) => typeof x !== 'string'))
      throw badRequest('invalid patch: $retainKeys must be a list of strings');
    for (const k of Object.keys(result)) if (!retain.includes(k)) delete result[k];
  }
  return result;
}

function mergeList(original: Json[], patch: Json[], schema: PatchSchema): Json[] {
  const mergeKey = schema.mergeKey;
  if (mergeKey === undefined) {
    // A set of primitives: add what is missing, keep the order.
    const out = [...original];
    for (const item of patch) if (!out.some((o) => deepEqual(o, item))) out.push(item);
    return out;
  }
  if (patch.some((item) => isObject(item) && item.$patch === 'replace')) {
    return patch
      .filter((item) => !(isObject(item) && item.$patch === 'replace'))
      .map((item) => (isObject(item) ? withoutDirectives(item) : item));
  }
  let out = [...original];
  for (const item of patch) {
    if (!isObject(item))
      throw unknownInternal(`cannot merge a non-map item ${goFormat(item)} into a list merged by key ${mergeKey}`);
    const directive = directiveOf(item);
    if (!Object.prototype.hasOwnProperty.call(item, mergeKey)) {
      throw unknownInternal(`map: ${goFormat(item)} does not contain declared merge key: ${mergeKey}`);
    }
    const keyValue = item[mergeKey];
    const same = (o: Json) => isObject(o) && deepEqual(o[mergeKey], keyValue);
    if (directive === 'delete') {
      out = out.filter((o) => !same(o));
      continue;
    }
    const at = out.findIndex(same);
    if (at >= 0) {
      const merged = mergeMap(out[at] as JsonObject, item, schema.items);
      if (merged === DELETE) out.splice(at, 1);
      else out[at] = merged;
    } else {
      const added = mergeMap({}, item, schema.items);
      if (added !== DELETE) out.push(added);
    }
  }
  return out;
}

/**
 * `$setElementOrder`: the items named in `order` take, in that order, the places such items hold
 * in the list; items the patch does not name (the server's own) stay where they are.
 */
function reorder(list: Json[], order: Json[], mergeKey: string | undefined): Json[] {
  const idOf = (item: Json): Json | undefined => {
    if (mergeKey === undefined) return item;
    return isObject(item) ? item[mergeKey] : undefined;
  };
  const wanted = order.map((o) => {
    if (mergeKey !== undefined && !(isObject(o) && Object.prototype.hasOwnProperty.call(o, mergeKey))) {
      throw unknownInternal(`map: ${goFormat(o)} does not contain declared merge key: ${mergeKey}`);
    }
    return mergeKey === undefined ? o : (o as JsonObject)[mergeKey]!;
  });
  const rank = (item: Json) => wanted.findIndex((w) => deepEqual(w, idOf(item)));
  const slots = list.map((item, i) => ({ item, i, r: rank(item) })).filter((x) => x.r >= 0);
  const sorted = [...slots].sort((a, b) => a.r - b.r);
  const out = [...list];
  slots.forEach((slot, n) => {
    out[slot.i] = sorted[n]!.item;
  });
  return out;
}
