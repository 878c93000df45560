// A LabelSelector object (matchLabels / matchExpressions, as in plans) in the string form the API
// takes in `?labelSelector=`: `app=web,tier in (a,b),!legacy,canary`.
import type { LabelSelector } from '../plan/types.js';

/** Formats a selector for the API; an empty selector is the empty string (matches everything). */
export function formatLabelSelector(selector: LabelSelector | undefined): string {
  if (!selector) return '';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    parts.push(`${key}=${value}`);
  }
  for (const req of selector.matchExpressions ?? []) {
    const values = [...(req.values ?? [])].sort();
    switch (req.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) throw new Error(`label selector: "${req.key} ${req.operator}" needs at least one value`);
        parts.push(`${req.key} ${req.operator.toLowerCase()} (${values.join(',')})`);
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
