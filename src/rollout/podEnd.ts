// How one pod's flow ended, as the rollout reports and counts it, and the only mappings between
// the words. Pure.
//
//   decide.ts Step (terminal)  →  PodOutcome (executor)  →  PodResult (events)  →  PodState (counts)
//   done                          done                      upgraded | rolled-back  upgraded (see below)
//   failed                        failed                    failed                  failed
//   refused                       refused                   refused                 failed
//   foreign                       foreign                   foreign                 failed
//   vanished                      vanished                  vanished                vanished
//   skipped                       skipped                   skipped                 skipped
//   (signal or cache closed)      aborted                   aborted                 pending (still to do)
//
// - A step that ends a flow and the executor's outcome use one word, FlowEnd (inplace/flowEnd.ts);
//   the outcome adds the writes made.
// - A PodResult is what the rollout reports (`pod-end`'s `result`): a `done` outcome is named by
//   the flow's direction, every other end keeps its word.
// - A PodState is what is counted (the rollout record's counts, `kwave_rollout_pods{state}`):
//   every pod that did not reach its target and was not gone is a failure there, as it is for
//   `maxFailed` and the wave summaries.
import type { PodOutcome } from '../inplace/executor.js';
import type { FlowEnd } from '../inplace/flowEnd.js';
import type { Direction } from '../inplace/state.js';

export type PodResult = Exclude<FlowEnd, 'done'> | 'upgraded' | 'rolled-back';

/** Still to do, under way, or where a finished pod is counted (a result's word, see countedAs). */
export const POD_STATES = [
  'pending',
  'in_progress',
  'upgraded',
  'failed',
  'skipped',
  'vanished',
] as const satisfies readonly ('pending' | 'in_progress' | PodResult)[];
export type PodState = (typeof POD_STATES)[number];
export type PodCounts = Record<PodState, number>;

export function emptyCounts(): PodCounts {
  return { pending: 0, in_progress: 0, upgraded: 0, failed: 0, skipped: 0, vanished: 0 };
}

/** The result a rollout reports for a flow's outcome. */
export function resultOf(outcome: PodOutcome, direction: Direction): PodResult {
  switch (outcome.kind) {
    case 'done':
      return direction === 'upgrade' ? 'upgraded' : 'rolled-back';
    default:
      return outcome.kind;
  }
}

/** Results that count against `maxFailed` and as `failed` in the counts. */
export function isFailure(result: PodResult): boolean {
  return result === 'failed' || result === 'refused' || result === 'foreign';
}

/**
 * Where a finished pod is counted. `rolled-back` in `kwave rollback` is the work done, so it is
 * counted where upgrades are; after a halted upgrade the rollback's pods are tallied apart
 * (the record's `rollback` progress, `kwave_rollbacks_total`), not here. An aborted pod is
 * still to do.
 */
export function countedAs(result: PodResult): PodState {
  if (isFailure(result)) return 'failed';
  switch (result) {
    case 'upgraded':
    case 'rolled-back':
      return 'upgraded';
    case 'vanished':
      return 'vanished';
    case 'skipped':
      return 'skipped';
    default:
      return 'pending';
  }
}

/** `counts` with one pod moved from `from` to `to` (never below zero). */
export function movePod(counts: PodCounts, from: PodState, to: PodState): PodCounts {
  const next = { ...counts };
  if (next[from] > 0) next[from] -= 1;
  next[to] += 1;
  return next;
}
