// A pod's new version holds most of its last version again: the spec (the kubelet's status writes
// and kwave's gate patches leave it alone), labels, annotations, owners, the conditions and
// container states that did not move. The cache keeps the last version's objects for those parts
// instead of the new copies, which then die young: what a garbage collection has to copy and
// promote is only what changed. At 10,000 pods, eight versions each, that was most of what
// survived kwave's young-generation collections. Pure.
import type { V1Pod } from '@kubernetes/client-node';

type Json = Record<string, unknown>;

/** Deep equality of decoded JSON (objects, arrays, strings, numbers, booleans). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Json;
  const y = b as Json;
  let count = 0;
  for (const k in x) {
    if (!sameJson(x[k], y[k]) || !(k in y)) return false;
    count++;
  }
  for (const _ in y) count--;
  return count === 0;
}

/** `next[key]`, or `previous[key]` when the two are equal (and both present). */
function shared<T>(previous: T | undefined, next: T | undefined): T | undefined {
  return previous !== undefined && next !== undefined && sameJson(previous, next) ? previous : next;
}

/** A list whose equal items (by position) are the previous list's; the previous list itself when all are. */
function sharedItems<T>(previous: T[] | undefined, next: T[] | undefined, item: (p: T, n: T) => T = (p, n) => shared(p, n)!): T[] | undefined {
  if (!previous || !next) return next;
  let all = previous.length === next.length;
  const out = next.map((n, i) => {
    const p = previous[i];
    const kept = p === undefined ? n : item(p, n);
    if (kept !== p) all = false;
    return kept;
  });
  return all ? previous : out;
}

/**
 * Puts `previous`'s objects into `next` (a view just decoded, not yet seen by anyone) wherever
 * they are equal, and returns `next`. Only parts are shared, never the top objects that carry
 * the resourceVersion.
 */
export function shareUnchangedParts(previous: V1Pod, next: V1Pod): V1Pod {
  const pm = previous.metadata;
  const nm = next.metadata;
  if (pm && nm) {
    if (nm.labels) nm.labels = shared(pm.labels, nm.labels);
    if (nm.annotations) nm.annotations = shared(pm.annotations, nm.annotations);
    if (nm.ownerReferences) nm.ownerReferences = shared(pm.ownerReferences, nm.ownerReferences);
  }
  if (next.spec) next.spec = shared(previous.spec, next.spec);
  const ps = previous.status;
  const ns = next.status;
  if (ps && ns) {
    if (ns.conditions) ns.conditions = sharedItems(ps.conditions, ns.conditions);
    if (ns.containerStatuses) {
      ns.containerStatuses = sharedItems(ps.containerStatuses, ns.containerStatuses, (p, n) => {
        if (sameJson(p, n)) return p;
        if (n.state) n.state = shared(p.state, n.state);
        if (n.lastState) n.lastState = shared(p.lastState, n.lastState);
        return n;
      });
    }
  }
  return next;
}
