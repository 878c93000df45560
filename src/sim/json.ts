// Small helpers over JSON values: a key-order independent serialization (for hashing a
// container's spec) and a structural equality (so status is written only when it changed).
import { createHash } from 'node:crypto';

/** JSON text with object keys sorted, so equal values give equal text whatever their key order. */
function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
}

const hashes = new WeakMap<object, string>();

/**
 * A short hash of a JSON value (hex), independent of key order. A frozen value (a stored
 * snapshot's part, shared from write to write) is hashed once.
 */
export function jsonHash(value: unknown): string {
  const frozen = typeof value === 'object' && value !== null && Object.isFrozen(value);
  let hash = frozen ? hashes.get(value) : undefined;
  if (hash === undefined) {
    hash = createHash('sha1').update(stableStringify(value)).digest('hex').slice(0, 16);
    if (frozen) hashes.set(value, hash);
  }
  return hash;
}

/** Structural equality of JSON values; `undefined` members count as absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => jsonEqual(ao[k], bo[k]));
}
