// spec.clusters: each name and each context once (two entries for one context would run the plan
// twice against one cluster); spec.clusterOrder only beside clusters.
import type { DeepPartial, RawSpec } from '../raw.js';
import type { CheckContext } from './context.js';

export function checkClusters(ctx: CheckContext, spec: DeepPartial<RawSpec>): void {
  if (spec.clusterOrder !== undefined && spec.clusters === undefined && ctx.accepted(['spec', 'clusterOrder'])) {
    ctx.add(
      ['spec', 'clusterOrder'],
      'expected spec.clusters beside clusterOrder: the order is of the clusters the plan lists',
      { code: 'PLAN_MISSING_FIELD', anchor: 'key' },
    );
  }
  if (!Array.isArray(spec.clusters) || !ctx.accepted(['spec', 'clusters'])) return;
  for (const field of ['name', 'context'] as const) {
    const firstIndex = new Map<string, number>();
    spec.clusters.forEach((cluster, i) => {
      const path = ['spec', 'clusters', i, field];
      const value = typeof cluster === 'object' && cluster !== null ? cluster[field] : undefined;
      if (typeof value !== 'string' || !ctx.accepted(path)) return;
      const first = firstIndex.get(value);
      if (first === undefined) firstIndex.set(value, i);
      else
        ctx.add(
          path,
          `expected each cluster ${field} once, found ${JSON.stringify(value)} again (also clusters[${first}])`,
          { code: 'PLAN_DUPLICATE' },
        );
    });
  }
}
