// JSON merge patch (RFC 7386, `application/merge-patch+json`): maps merge recursively, `null`
// removes a member, anything else (lists included) replaces.
import { isObject, type Json } from '../json.js';

export function mergePatch(target: Json | undefined, patch: Json): Json {
  // Shallow copies along the patched paths: the target's other members (frozen) are shared, and
  // the patch's values come from its parsed body, which nothing else holds.
  if (!isObject(patch)) return patch;
  const result = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = mergePatch(result[k], v);
  }
  return result;
}
