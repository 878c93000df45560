// The same few texts come back with every pod version (image references, image IDs, the state
// annotation): each is worked out once. Bounded: a cache that fills up starts over.

/** `compute`, remembered by its text for the last `max` distinct texts or more. Results are shared: do not change them. */
export function textMemo<V>(compute: (text: string) => V, max: number): (text: string) => V {
  const known = new Map<string, V>();
  return (text) => {
    if (known.has(text)) return known.get(text) as V;
    if (known.size >= max) known.clear();
    const value = compute(text);
    known.set(text, value);
    return value;
  };
}
