// The progress bar of each wave of a rollout, from its record and plan alone (no pod is read):
// how many of the wave's pods are at the target, in flight, failed, waiting for their node, and
// left. Pure; bounded by the number of waves whatever the fleet size.
//
// A wave's size is the plan's: its cumulative target (rollout/waves.ts resolveTargets for the
// record's `selected`) less the one before. Pods at the target fill the waves in order, as the
// runner counts them (pods already at the target count toward the first targets), so wave i holds
// `clamp(done − target(i−1), 0, size(i))` of them; an ended wave's failures and vanished pods are
// its summary's, a running wave's failures are the record's failures of that wave (the latest
// LIMITS.failures of them). Without a plan (a record whose plan text does not load) the bars of
// ended waves come from their summaries and the rest are unknown.
import type { Plan } from '../plan/types.js';
import type { RolloutRecord } from '../record/record.js';
import { resolveTargets } from '../rollout/waves.js';

export interface WaveBar {
  wave: number;
  /** Pods of the wave; undefined when the plan could not be read and the wave has not ended. */
  pods?: number;
  atTarget: number;
  inFlight: number;
  failed: number;
  vanished: number;
  waitingForNode: number;
  left: number;
  state: 'done' | 'running' | 'next' | 'halted';
}

const clamp = (n: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, n));

export function waveBars(record: RolloutRecord, plan: Plan | undefined): WaveBar[] {
  const targets = plan ? resolveTargets(plan.strategy.waves, record.selected) : [];
  const count = Math.max(record.waves, targets.length, ...record.waveSummaries.map((s) => s.wave));
  const done = record.counts.upgraded + record.counts.skipped;
  const inFlightBy = tally(record.inFlight.map((p) => p.wave));
  const failedBy = tally(record.failures.map((f) => f.wave));
  const summaries = new Map(record.waveSummaries.map((s) => [s.wave, s]));
  const waitingForNode = record.waitingForNodes?.length ?? 0;
  const halted = record.phase === 'Halted' || record.phase === 'RolledBack';
  const bars: WaveBar[] = [];
  for (let wave = 1; wave <= count; wave++) {
    const summary = summaries.get(wave);
    const target = targets[wave - 1];
    const previous = wave === 1 ? 0 : (targets[wave - 2] ?? 0);
    const pods = target !== undefined ? target - previous : summary?.pods;
    const current = wave === record.wave;
    const inFlight = inFlightBy.get(wave) ?? 0;
    const failed = summary ? summary.failed : (failedBy.get(wave) ?? 0);
    const vanished = summary?.vanished ?? 0;
    const waiting = current && !summary ? waitingForNode : 0;
    const atTarget =
      pods === undefined
        ? (summary?.upgraded ?? 0)
        : target !== undefined
          ? clamp(done - previous, 0, pods)
          : clamp(summary?.upgraded ?? 0, 0, pods);
    const left = pods === undefined ? 0 : Math.max(0, pods - atTarget - inFlight - failed - vanished - waiting);
    const state: WaveBar['state'] =
      current && halted ? 'halted' : summary || wave < record.wave ? 'done' : current ? 'running' : 'next';
    bars.push({
      wave,
      ...(pods === undefined ? {} : { pods }),
      atTarget,
      inFlight,
      failed,
      vanished,
      waitingForNode: waiting,
      left,
      state,
    });
  }
  return bars;
}

function tally(values: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const v of values) out.set(v, (out.get(v) ?? 0) + 1);
  return out;
}
