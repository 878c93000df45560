// spec.update: image references by the registry grammar, each container named once, and target
// resources the API server could take (a request above its limit it refuses, as it would here).
import { quoted } from '../describe.js';
import { IMAGE_REF_EXPECTED, parseImageRef } from '../imageRef.js';
import { parseQuantity } from '../../quantity.js';
import type { DeepPartial, RawSpec } from '../raw.js';
import type { CheckContext } from './context.js';

type RawContainer = NonNullable<DeepPartial<RawSpec['update']>['containers']>[number];

export function checkUpdate(ctx: CheckContext, update: DeepPartial<RawSpec['update']> | undefined): void {
  const firstIndex = new Map<string, number>();
  if (!ctx.accepted(['spec', 'update', 'containers'])) return;
  (update?.containers ?? []).forEach((container, i) => {
    const path = ['spec', 'update', 'containers', i];
    if (typeof container !== 'object' || container === null || !ctx.accepted(path)) return;
    const { name, image } = container;
    if (typeof image === 'string' && ctx.accepted([...path, 'image'])) {
      const parsed = parseImageRef(image);
      if (!parsed.ok)
        ctx.add([...path, 'image'], `expected ${IMAGE_REF_EXPECTED}, found ${quoted(image)}: ${parsed.reason}`);
    }
    checkRequestsWithinLimits(ctx, path, container);
    if (typeof name === 'string' && ctx.accepted([...path, 'name'])) {
      const first = firstIndex.get(name);
      if (first === undefined) firstIndex.set(name, i);
      else
        ctx.add(
          [...path, 'name'],
          `expected each container once, found ${JSON.stringify(name)} again (also containers[${first}])`,
          { code: 'PLAN_DUPLICATE' },
        );
    }
  });
}

/**
 * A request above its limit is refused by the API server on any pod; where the plan sets both, it
 * is refused here. (Where it sets one, the other is the pod's: `kwave plan` and `run` check it per pod.)
 */
function checkRequestsWithinLimits(ctx: CheckContext, path: (string | number)[], container: RawContainer): void {
  const res = container.resources;
  if (typeof res !== 'object' || res === null || !ctx.wholly([...path, 'resources'])) return;
  for (const resource of ['cpu', 'memory'] as const) {
    const request = res.requests?.[resource];
    const limit = res.limits?.[resource];
    if (typeof request !== 'string' || typeof limit !== 'string') continue;
    const r = parseQuantity(request);
    const l = parseQuantity(limit);
    if (r !== undefined && l !== undefined && r > l)
      ctx.add(
        [...path, 'resources', 'requests', resource],
        `expected a ${resource} request at most the limit ${quoted(limit)}, found ${quoted(request)} (the API server refuses a request above its limit)`,
      );
  }
}
