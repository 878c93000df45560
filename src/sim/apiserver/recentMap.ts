// A map that keeps only its recent entries: for memos whose entries are wanted soon after they are
// made, where a WeakMap would keep each one as long as its key lives (for the JSON text of every
// stored pod, 160 MB at 50,000 pods).
//
// Two generations of `size / 2` entries: when the newer one is full, the older one is dropped
// whole and the newer one takes its place. So the last `size / 2` entries set are always kept,
// never more than `size`. (Evicting the oldest key one at a time from one Map was slow: a Map
// keeps deleted slots until it rehashes, and finding its first live key walked past all of them,
// thousands per set for a large map.)

export class RecentMap<K, V> {
  private newer = new Map<K, V>();
  private older = new Map<K, V>();
  private readonly half: number;

  constructor(size: number) {
    this.half = Math.max(1, Math.floor(size / 2));
  }

  get(key: K): V | undefined {
    return this.newer.get(key) ?? this.older.get(key);
  }

  set(key: K, value: V): void {
    this.newer.set(key, value);
    if (this.newer.size >= this.half) {
      this.older = this.newer;
      this.newer = new Map();
    }
  }
}
