// spec.update: image references by the registry grammar, and each container named once.
import { quoted } from '../describe.js';
import { IMAGE_REF_EXPECTED, parseImageRef } from '../imageRef.js';
import type { DeepPartial, RawSpec } from '../raw.js';
import type { CheckContext } from './context.js';

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
