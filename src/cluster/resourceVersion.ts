// Ordering of resourceVersions. Kubernetes calls them opaque strings; every real server (etcd
// revisions) and the simulator use increasing integers, so we compare them as integers when both
// are, and otherwise admit we cannot tell — then the watch stream's order is trusted.

const INTEGER = /^\d+$/;

/** -1, 0 or 1 when both versions are integers; undefined when they cannot be compared. */
export function compareResourceVersions(a: string | undefined, b: string | undefined): -1 | 0 | 1 | undefined {
  if (a === undefined || b === undefined || !INTEGER.test(a) || !INTEGER.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** True only when `candidate` is known to be older than `current`. */
export function isKnownOlder(candidate: string | undefined, current: string | undefined): boolean {
  return compareResourceVersions(candidate, current) === -1;
}

/** True only when `candidate` is known to be newer than `current`. */
export function isKnownNewer(candidate: string | undefined, current: string | undefined): boolean {
  return compareResourceVersions(candidate, current) === 1;
}
