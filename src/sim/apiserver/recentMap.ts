// A map that keeps only its last `size` entries (the oldest set goes first): for memos whose
// entries are wanted soon after they are made, where a WeakMap would keep each one as long as its
// key lives (for the JSON text of every stored pod, 160 MB at 50,000 pods).

export class RecentMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly size: number) {}

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    this.map.set(key, value);
    if (this.map.size > this.size) this.map.delete(this.map.keys().next().value as K);
  }
}
