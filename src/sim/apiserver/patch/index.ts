// Applies a PATCH body to an object according to its Content-Type.
import { isObject, type Json, type JsonObject } from '../json.js';
import { badRequest, unsupportedMediaType } from '../status.js';
import { applyJsonPatch, decodeJsonPatch } from './json.js';
import { mergePatch } from './merge.js';
import { patchSchemaFor } from './schema.js';
import { strategicMerge } from './strategic.js';

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

/** The patch type of a Content-Type header (parameters such as charset ignored), or a 415. */
export function patchTypeOf(contentType: string | undefined): PatchType {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const found = PATCH_TYPES.find((t) => t === media);
  if (!found) throw unsupportedMediaType(media, PATCH_TYPES);
  return found;
}

/** The object after the patch; throws ApiError (400, 422, 500) as the real server would. */
export function applyPatch(type: PatchType, original: JsonObject, bodyText: string): JsonObject {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
  let result: Json;
  switch (type) {
    case 'application/json-patch+json':
      result = applyJsonPatch(original, decodeJsonPatch(body));
      break;
    case 'application/merge-patch+json':
      if (!isObject(body)) throw badRequest('merge patch must be a JSON object');
      result = mergePatch(original, body);
      break;
    case 'application/strategic-merge-patch+json':
      result = strategicMerge(original, body, patchSchemaFor(String(original.kind)));
      break;
  }
  if (!isObject(result)) throw badRequest('the patched document is not an object');
  return result;
}
