// A write's body decoded into the kind's type, as kube-apiserver decodes every body before
// anything else looks at it (pods: typedStatus.ts): 400 for a create or replace body that does
// not fit, 422 on the field `patch` for a patched object that does not.
import { isObject, type Json, type JsonObject } from './json.js';
import type { PatchType } from './patch/index.js';
import type { ResourceInfo } from './resources.js';
import { badRequest, invalid } from './status.js';
import { decodePodStatus, TypeMismatch } from './typedStatus.js';

/** A create or replace body, decoded into the kind's type: 400 when it does not fit. */
export function decodeBody(info: ResourceInfo, obj: JsonObject): JsonObject {
  if (info.resource !== 'pods') return obj;
  try {
    return decodePodStatus(obj);
  } catch (err) {
    if (err instanceof TypeMismatch)
      throw badRequest(`${info.kind} in version "${info.version}" cannot be handled as a ${info.kind}: ${err.message}`);
    throw err;
  }
}

/**
 * A patched object, decoded into the kind's type: 422 on the field `patch` (no kind, no name)
 * when it does not fit. The value shown is what the real server failed to decode: for a
 * strategic merge patch the patch itself (printed as a Go map), for the others the patched object.
 */
export function decodePatched(info: ResourceInfo, type: PatchType, patched: JsonObject, bodyText: string): JsonObject {
  if (info.resource !== 'pods') return patched;
  try {
    return decodePodStatus(patched);
  } catch (err) {
    if (!(err instanceof TypeMismatch)) throw err;
    const strategic = type === 'application/strategic-merge-patch+json';
    const value = strategic ? goPrint(JSON.parse(bodyText) as Json) : JSON.stringify(patched);
    throw invalid('', '', '', [
      { type: 'Invalid', field: 'patch', value, detail: strategic ? err.converter : err.json },
    ]);
  }
}

/** A decoded JSON value as Go's `%+v` prints it: `map[k:v]` with sorted keys, `[a b]`, `<nil>`. */
function goPrint(value: Json): string {
  if (value === null) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goPrint).join(' ')}]`;
  if (isObject(value))
    return `map[${Object.keys(value)
      .sort()
      .map((k) => `${k}:${goPrint(value[k]!)}`)
      .join(' ')}]`;
  return String(value);
}
