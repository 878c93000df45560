// Shallow equality of two flat objects, for keeping an existing object when a new one holds the
// same values (the simulated kubelet's statuses, the pod cache's versions). Pure.

/** The same members in the same order, each the same value (===): one JSON text, one object's worth. */
export function sameMembers(a: object, b: object): boolean {
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  if (ak.length !== bk.length) return false;
  for (let i = 0; i < ak.length; i++) {
    const k = ak[i]!;
    if (k !== bk[i] || (a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  }
  return true;
}
