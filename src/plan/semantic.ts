// The checks a JSON Schema cannot express, run on a plan's JS value after the schema. Each looks
// only at parts the schema accepted, so one mistake is reported once.
import { checkClusters } from './checks/clusters.js';
import { CheckContext } from './checks/context.js';
import { checkGates } from './checks/gates.js';
import { checkStrategy, maxWaveCount } from './checks/strategy.js';
import { checkTarget } from './checks/target.js';
import { checkUpdate } from './checks/update.js';
import { checkWindow } from './checks/window.js';
import type { JsonPath } from './path.js';
import type { Issue } from './planError.js';
import type { DeepPartial, RawPlan } from './raw.js';

/** @param badValues paths of the values the schema rejected */
export function semanticIssues(value: unknown, badValues: readonly JsonPath[]): Issue[] {
  const ctx = new CheckContext(badValues);
  if (typeof value !== 'object' || value === null || !ctx.accepted(['spec'])) return [];
  // The schema has vouched for every part `ctx.accepted` lets through; what is missing stays undefined.
  const spec = (value as DeepPartial<RawPlan>).spec;
  if (typeof spec !== 'object' || spec === null) return [];

  checkTarget(ctx, spec.target);
  checkUpdate(ctx, spec.update);
  checkStrategy(ctx, spec.strategy);
  const wavesUsable = ctx.wholly(['spec', 'strategy', 'waves']) && ctx.wholly(['spec', 'strategy', 'waveSize']);
  checkGates(ctx, spec.gates, wavesUsable ? maxWaveCount(spec.strategy) : undefined);
  checkWindow(ctx, spec.window);
  checkClusters(ctx, spec);
  if (ctx.accepted(['spec', 'metrics'])) ctx.url(['spec', 'metrics', 'pushgateway'], spec.metrics?.pushgateway);
  if (Array.isArray(spec.notify) && ctx.accepted(['spec', 'notify'])) {
    spec.notify.forEach((n, i) => {
      if (typeof n !== 'object' || n === null || !ctx.accepted(['spec', 'notify', i])) return;
      ctx.url(['spec', 'notify', i, 'url'], n.url);
      ctx.duration(['spec', 'notify', i, 'timeout'], n.timeout, { positive: true });
    });
  }
  return ctx.issues;
}
