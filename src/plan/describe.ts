// How a found value is named in messages: "found "ten"", "found a list", "found nothing".

const MAX_SHOWN = 60;

export function describeValue(value: unknown): string {
  if (value === undefined || value === null) return 'nothing';
  if (typeof value === 'string') {
    if (value === '') return 'an empty string';
    const shown = value.length > MAX_SHOWN ? value.slice(0, MAX_SHOWN) + '…' : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  if (value instanceof Uint8Array) return 'binary data';
  if (typeof value === 'object') return Object.keys(value).length === 0 ? 'an empty mapping' : 'a mapping';
  return typeof value;
}

/** A string from the plan, quoted for a message and cut to a readable length (a hostile key may be megabytes). */
export function quoted(text: string): string {
  return JSON.stringify(text.length > MAX_SHOWN ? text.slice(0, MAX_SHOWN) + '…' : text);
}

/** `["a", "b", "c"]` → `"a", "b" or "c"`. */
export function oneOfList(items: readonly unknown[]): string {
  const shown = items.map((i) => JSON.stringify(i));
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`;
}
