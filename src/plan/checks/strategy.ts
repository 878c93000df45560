// spec.strategy: wave targets that can be met in order, and amounts that let a pod start at all.
import { formatAmount, parseAmount } from '../amount.js';
import { PLAN_DEFAULTS } from '../defaults.js';
import type { DeepPartial, RawSpec } from '../raw.js';
import type { Amount } from '../types.js';
import type { CheckContext } from './context.js';

type RawStrategy = DeepPartial<NonNullable<RawSpec['strategy']>>;
const AT = ['spec', 'strategy'];

function checkTargets(ctx: CheckContext, waves: unknown[]): void {
  let lastCount: Amount | undefined;
  let lastFraction: Amount | undefined;
  waves.forEach((raw, i) => {
    const path = [...AT, 'waves', i];
    const a = parseAmount(raw);
    if (!a) return;
    const shown = formatAmount(a);
    if (a.kind === 'fraction' && a.value === 0) {
      ctx.add(path, `expected a percentage above 0%, found "${shown}" (every wave upgrades at least one pod)`);
      return;
    }
    if (a.kind === 'count' && lastFraction) {
      // 5 after "10%" is more for 40 pods and less for 100: the order would depend on the fleet.
      ctx.add(
        path,
        `expected numbers of pods before percentages, found ${shown} after "${formatAmount(lastFraction)}" (their order would depend on the number of pods)`,
      );
      return;
    }
    const last = a.kind === 'count' ? lastCount : lastFraction;
    if (last && a.value < last.value) {
      const lastShown = last.kind === 'count' ? formatAmount(last) : `"${formatAmount(last)}"`;
      const nowShown = a.kind === 'count' ? shown : `"${shown}"`;
      ctx.add(
        path,
        `expected targets that never decrease (each is the total done after its wave), found ${nowShown} after ${lastShown}`,
      );
      return;
    }
    if (a.kind === 'count') lastCount = a;
    else lastFraction = a;
  });
}

function checkAboveZero(ctx: CheckContext, field: string, raw: unknown): void {
  const a = parseAmount(raw);
  if (a?.kind === 'fraction' && a.value === 0 && ctx.accepted([...AT, field])) {
    ctx.add(
      [...AT, field],
      `expected a percentage above 0%, found "0%" (a rollout must be able to change at least one pod)`,
    );
  }
}

export function checkStrategy(ctx: CheckContext, strategy: RawStrategy | undefined): void {
  if (typeof strategy !== 'object' || strategy === null || !ctx.accepted(AT)) return;
  if (Array.isArray(strategy.waves) && ctx.wholly([...AT, 'waves'])) checkTargets(ctx, strategy.waves);
  checkAboveZero(ctx, 'waveSize', strategy.waveSize);
  checkAboveZero(ctx, 'maxUnavailable', strategy.maxUnavailable);
  ctx.duration([...AT, 'podTimeout'], strategy.podTimeout, { positive: true });
}

/**
 * The most waves the strategy can produce, when the plan alone tells: the number of targets, or
 * for a percentage wave size ceil(100 / p) (fewer when pods are few). Undefined for a wave size in
 * pods: then the count depends on how many pods are selected, known only at run time.
 */
export function maxWaveCount(strategy: RawStrategy | undefined): number | undefined {
  if (strategy === undefined) return PLAN_DEFAULTS.waves.length;
  if (Array.isArray(strategy.waves)) return strategy.waves.length;
  const size = parseAmount(strategy?.waveSize);
  if (size?.kind === 'fraction' && size.value > 0) return Math.ceil(1 / size.value - 1e-9);
  return undefined;
}
