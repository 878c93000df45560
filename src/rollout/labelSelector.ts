// Kubernetes label selectors: matching a pod's labels, and the query string of a list or watch. Pure.
import type { LabelSelector } from '../plan/types.js';

/**
 * Whether `labels` satisfy a Kubernetes LabelSelector: every `matchLabels` pair and every
 * expression (ANDed). `In`: the key is set to one of the values; `NotIn`: the key is absent or
 * set to none of them; `Exists` / `DoesNotExist`: the key is / is not set. An empty selector
 * matches every pod, as in Kubernetes. (`In` with no values matches nothing; the plan loader
 * refuses it anyway.)
 */
export function matchesSelector(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const l = labels ?? {};
  const has = (k: string) => Object.prototype.hasOwnProperty.call(l, k);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(key) || l[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!has(req.key) || !values.includes(l[req.key] as string)) return false;
        break;
      case 'NotIn':
        if (has(req.key) && values.includes(l[req.key] as string)) return false;
        break;
      case 'Exists':
        if (!has(req.key)) return false;
        break;
      case 'DoesNotExist':
        if (has(req.key)) return false;
        break;
    }
  }
  return true;
}

/**
 * The selector as the `labelSelector` query string of a list or watch call:
 * `app=web,tier in (a,b),!canary`. matchLabels first (by key), then the expressions in plan
 * order; values sorted, so equal selectors give equal strings. The empty selector is `''`
 * (everything).
 */
export function renderSelector(selector: LabelSelector): string {
  const parts: string[] = [];
  const labels = selector.matchLabels ?? {};
  for (const key of Object.keys(labels).sort()) parts.push(`${key}=${labels[key]}`);
  for (const req of selector.matchExpressions ?? []) {
    // A set holding only the empty value is written `(,)`: the API server's parser reads `()`
    // as no values at all (or refuses it), `(,)` as the empty value.
    const values = [...(req.values ?? [])].sort().join(',') || ',';
    switch (req.operator) {
      case 'In':
        parts.push(`${req.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${req.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(req.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${req.key}`);
        break;
    }
  }
  return parts.join(',');
}
