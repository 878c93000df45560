// Which objects a list or watch asks for: a namespace, a label selector and a field selector, read
// from the query string and checked against the resource's supported fields.
import type { KubeObject } from '../store.js';
import { matchesFields, parseFieldSelector, type FieldSelector } from './fieldSelector.js';
import { matchesLabels, parseLabelSelector, SelectorParseError, type LabelSelector } from './labelSelector.js';
import type { ResourceInfo } from './resources.js';
import { badRequest } from './status.js';

export interface Predicate {
  namespace?: string;
  labels: LabelSelector;
  fields: FieldSelector;
  /** True when only the namespace restricts the result (lists then report remainingItemCount). */
  empty: boolean;
  matches(obj: KubeObject): boolean;
}

export function buildPredicate(info: ResourceInfo, namespace: string | undefined, query: URLSearchParams): Predicate {
  let labels: LabelSelector;
  let fields: FieldSelector;
  try {
    labels = parseLabelSelector(query.get('labelSelector') ?? '');
    fields = parseFieldSelector(query.get('fieldSelector') ?? '', info.fields);
  } catch (err) {
    if (err instanceof SelectorParseError) throw badRequest(err.message);
    throw err;
  }
  return {
    namespace,
    labels,
    fields,
    empty: labels.length === 0 && fields.length === 0,
    matches: (obj) =>
      (namespace === undefined || obj.metadata.namespace === namespace) &&
      matchesLabels(labels, obj.metadata.labels) &&
      matchesFields(fields, obj, info.fields),
  };
}
