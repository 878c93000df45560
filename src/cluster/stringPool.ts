// One copy of each string value that repeats across pods. JSON.parse makes a new string for every
// value of every pod (object keys are shared by V8, values are not): at 10,000 pods the pod cache
// held 10,000 copies each of "IfNotPresent", "ContainersReady", the image, the node's
// tolerations… and 70,000 time strings, about a third of the pods' heap. decode.ts passes the
// values that repeat through a pool; values unique to a pod (name, uid, resourceVersion) are not.
//
// Bounded: when full, the pool starts over (a long run's old timestamps do not pin it full). A
// string value is immutable, so handing out the pooled copy changes nothing but memory.

export class StringPool {
  private readonly pooled = new Map<string, string>();

  constructor(
    private readonly maxEntries = 8192,
    /** Longer strings (messages) are kept as they come: rarely repeated, costly to hash. */
    private readonly maxLength = 256,
  ) {}

  /** The pooled copy of `value` (pooling it if new); anything not a string → undefined. */
  share(value: unknown): string | undefined {
    if (typeof value !== 'string') return undefined;
    if (value.length > this.maxLength) return value;
    const known = this.pooled.get(value);
    if (known !== undefined) return known;
    if (this.pooled.size >= this.maxEntries) this.pooled.clear();
    this.pooled.set(value, value);
    return value;
  }

  get size(): number {
    return this.pooled.size;
  }
}
