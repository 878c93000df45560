// JSON Patch (RFC 6902, `application/json-patch+json`): add, remove, replace, move, copy and test,
// addressed by JSON Pointers (RFC 6901). A malformed patch is a 400; one that does not apply to
// the object (a missing path, a failed test) is the 422 the real server answers with.
import { clone, deepEqual, isObject, type Json } from '../json.js';
import { badRequest, unprocessable } from '../status.js';

interface Operation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: Json;
}

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Checks the shape of a JSON Patch document (400 when it is not one). */
export function decodeJsonPatch(body: unknown): Operation[] {
  if (!Array.isArray(body)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  return body.map((raw, i) => {
    if (!isObject(raw)) throw badRequest(`invalid JSON patch: operation ${i} is not an object`);
    const { op, path, from } = raw;
    if (typeof op !== 'string' || !OPS.has(op))
      throw badRequest(`invalid JSON patch: operation ${i}: unsupported op ${JSON.stringify(op ?? null)}`);
    if (typeof path !== 'string') throw badRequest(`invalid JSON patch: operation ${i} (${op}): missing path`);
    if ((op === 'move' || op === 'copy') && typeof from !== 'string')
      throw badRequest(`invalid JSON patch: operation ${i} (${op}): missing from`);
    if ((op === 'add' || op === 'replace' || op === 'test') && !('value' in raw))
      throw badRequest(`invalid JSON patch: operation ${i} (${op}): missing value`);
    return raw as unknown as Operation;
  });
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/'))
    throw unprocessable(`invalid JSON pointer ${JSON.stringify(pointer)}: must start with /`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Json[] | Record<string, Json>;

/** The parent container of the pointer's target and the last token, or a 422. */
function locate(doc: Json, tokens: string[], pointer: string, op: string): { parent: Container; key: string } {
  let cur: Json = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) {
      const i = arrayIndex(t, cur.length - 1, pointer, op);
      cur = cur[i]!;
    } else if (isObject(cur) && Object.prototype.hasOwnProperty.call(cur, t)) {
      cur = cur[t]!;
    } else throw unprocessable(`${op} operation does not apply: doc is missing path: ${pointer}`);
  }
  if (!Array.isArray(cur) && !isObject(cur))
    throw unprocessable(`${op} operation does not apply: doc is missing path: ${pointer}`);
  return { parent: cur, key: tokens[tokens.length - 1]! };
}

function arrayIndex(token: string, max: number, pointer: string, op: string): number {
  if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) > max)
    throw unprocessable(`${op} operation does not apply: index out of bounds in path: ${pointer}`);
  return Number(token);
}

function getAt(doc: Json, pointer: string, op: string): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return doc;
  const { parent, key } = locate(doc, tokens, pointer, op);
  if (Array.isArray(parent)) return parent[arrayIndex(key, parent.length - 1, pointer, op)]!;
  if (!Object.prototype.hasOwnProperty.call(parent, key))
    throw unprocessable(`${op} operation does not apply: doc is missing key: ${pointer}`);
  return parent[key]!;
}

function addAt(doc: Json, pointer: string, value: Json, op: string): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const { parent, key } = locate(doc, tokens, pointer, op);
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : arrayIndex(key, parent.length, pointer, op);
    parent.splice(i, 0, value);
  } else parent[key] = value;
  return doc;
}

function removeAt(doc: Json, pointer: string, op: string): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw unprocessable(`${op} operation does not apply: cannot remove the whole document`);
  const { parent, key } = locate(doc, tokens, pointer, op);
  if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length - 1, pointer, op), 1);
  else {
    if (!Object.prototype.hasOwnProperty.call(parent, key))
      throw unprocessable(`${op} operation does not apply: doc is missing key: ${pointer}`);
    delete parent[key];
  }
  return doc;
}

/** Applies the operations in order to a copy of `doc`. */
export function applyJsonPatch(doc: Json, operations: Operation[]): Json {
  let out = clone(doc);
  for (const o of operations) {
    switch (o.op) {
      case 'add':
        out = addAt(out, o.path, clone(o.value!), o.op);
        break;
      case 'remove':
        out = removeAt(out, o.path, o.op);
        break;
      case 'replace':
        getAt(out, o.path, o.op); // must exist
        out =
          parsePointer(o.path).length === 0
            ? clone(o.value!)
            : addAt(removeAt(out, o.path, o.op), o.path, clone(o.value!), o.op);
        break;
      case 'move': {
        const value = getAt(out, o.from!, o.op);
        if (o.path !== o.from && o.path.startsWith(`${o.from}/`))
          throw unprocessable(`move operation does not apply: cannot move ${o.from} into its own child ${o.path}`);
        out = addAt(removeAt(out, o.from!, o.op), o.path, value, o.op);
        break;
      }
      case 'copy':
        out = addAt(out, o.path, clone(getAt(out, o.from!, o.op)), o.op);
        break;
      case 'test': {
        let actual: Json | undefined;
        try {
          actual = getAt(out, o.path, o.op);
        } catch {
          actual = undefined;
        }
        if (!deepEqual(actual, o.value)) throw unprocessable(`testing value ${o.path} failed: test failed`);
        break;
      }
    }
  }
  return out;
}
