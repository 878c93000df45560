// A readable difference between two JSON values, one line per changed leaf, for the text that
// follows a "pod updates may not change fields" refusal (the real server prints a Go cmp.Diff;
// this names the same fields in JSON path form).
import { isObject } from '../json.js';

function leaves(value: unknown, path: string, out: Map<string, unknown>): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(path, []);
    value.forEach((v, i) => leaves(v, `${path}[${i}]`, out));
  } else if (isObject(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined);
    if (keys.length === 0) out.set(path, {});
    for (const k of keys) leaves(value[k], path ? `${path}.${k}` : k, out);
  } else {
    out.set(path, value);
  }
}

/** Lines `- path: old` / `+ path: new` for every leaf that differs, in path order. */
export function describeDiff(before: unknown, after: unknown, root: string): string {
  const a = new Map<string, unknown>();
  const b = new Map<string, unknown>();
  leaves(before, root, a);
  leaves(after, root, b);
  const paths = [...new Set([...a.keys(), ...b.keys()])];
  const lines: string[] = [];
  for (const p of paths) {
    const av = a.get(p);
    const bv = b.get(p);
    if (JSON.stringify(av) === JSON.stringify(bv)) continue;
    if (a.has(p)) lines.push(`- ${p}: ${JSON.stringify(av)}`);
    if (b.has(p)) lines.push(`+ ${p}: ${JSON.stringify(bv)}`);
  }
  return lines.join('\n');
}
