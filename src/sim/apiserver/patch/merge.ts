// JSON merge patch (RFC 7386, `application/merge-patch+json`): maps merge recursively, `null`
// removes a member, anything else (lists included) replaces.
import { clone, isObject, type Json } from '../json.js';

export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const result = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = mergePatch(result[k], v);
  }
  return result;
}
