// spec.gates: names unique, waves that exist, conditions that compile, something to check.
import { PLAN_DEFAULTS } from '../defaults.js';
import { quoted } from '../describe.js';
import { celProblem } from '../cel.js';
import type { DeepPartial, RawGate } from '../raw.js';
import type { CheckContext } from './context.js';

function checkConditions(ctx: CheckContext, at: (string | number)[], prom: DeepPartial<RawGate['prometheus']>): void {
  for (const field of ['successCondition', 'failureCondition'] as const) {
    const expr = prom?.[field];
    const path = [...at, field];
    if (typeof expr !== 'string' || !ctx.accepted(path)) continue;
    const problem = celProblem(expr);
    if (problem) {
      const example = field === 'successCondition' ? 'result < 0.01' : 'result >= 0.05';
      ctx.add(
        path,
        `expected a CEL condition over result, like "${example}", found ${quoted(expr)}: ${problem.reason}`,
        { offset: problem.offset },
      );
    }
  }
}

/** @param waveCount the most waves the strategy can make, if the plan alone tells */
export function checkGates(
  ctx: CheckContext,
  gates: DeepPartial<RawGate>[] | undefined,
  waveCount: number | undefined,
): void {
  const firstIndex = new Map<string, number>();
  if (!ctx.accepted(['spec', 'gates'])) return;
  (gates ?? []).forEach((gate, i) => {
    const at = ['spec', 'gates', i];
    if (typeof gate !== 'object' || gate === null || !ctx.accepted(at)) return;

    if (typeof gate.name === 'string' && ctx.accepted([...at, 'name'])) {
      const first = firstIndex.get(gate.name);
      if (first === undefined) firstIndex.set(gate.name, i);
      else
        ctx.add(
          [...at, 'name'],
          `expected each gate name once, found ${quoted(gate.name ?? '')} again (also gates[${first}])`,
          { code: 'PLAN_DUPLICATE' },
        );
    }

    if (waveCount !== undefined && Array.isArray(gate.afterWaves) && ctx.wholly([...at, 'afterWaves'])) {
      gate.afterWaves.forEach((n, j) => {
        if (typeof n === 'number' && n > waveCount) {
          ctx.add(
            [...at, 'afterWaves', j],
            `expected a wave number from 1 to ${waveCount} (the plan makes at most ${waveCount} waves), found ${n}`,
          );
        }
      });
    }

    const checksSomething =
      gate.pause !== undefined || gate.approval === true || gate.prometheus !== undefined || gate.webhook !== undefined;
    if (!checksSomething) {
      ctx.add(
        at,
        'expected at least one of pause, approval: true, prometheus or webhook, found a gate that checks nothing',
        { code: 'PLAN_MISSING_FIELD' },
      );
    }
    if (gate.prometheus !== undefined && gate.webhook !== undefined) {
      ctx.add(
        [...at, 'webhook'],
        'expected at most one of prometheus and webhook in a gate, found both (write two gates)',
        { code: 'PLAN_CONFLICT', anchor: 'key' },
      );
    }

    ctx.duration([...at, 'pause'], gate.pause);

    const prom = gate.prometheus;
    if (typeof prom === 'object' && prom !== null && ctx.accepted([...at, 'prometheus'])) {
      const p = [...at, 'prometheus'];
      ctx.url([...p, 'address'], prom.address);
      ctx.duration([...p, 'initialDelay'], prom.initialDelay);
      ctx.duration([...p, 'interval'], prom.interval, { positive: true });
      ctx.duration([...p, 'timeout'], prom.timeout, { positive: true });
      checkConditions(ctx, p, prom);
      const limit = prom.consecutiveSuccessLimit;
      const count = typeof prom.count === 'number' ? prom.count : PLAN_DEFAULTS.prometheus.count;
      if (typeof limit === 'number' && limit > count && ctx.accepted([...p, 'consecutiveSuccessLimit'])) {
        ctx.add(
          [...p, 'consecutiveSuccessLimit'],
          `expected at most count (${count}) successful measurements in a row, found ${limit}: the gate could never pass`,
        );
      }
    }
    const hook = gate.webhook;
    if (typeof hook === 'object' && hook !== null && ctx.accepted([...at, 'webhook'])) {
      ctx.url([...at, 'webhook', 'url'], hook.url);
      ctx.duration([...at, 'webhook', 'timeout'], hook.timeout, { positive: true });
    }
  });
}
