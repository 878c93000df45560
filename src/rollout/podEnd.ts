// How one pod's flow ended, as the rollout reports and counts it, and the only mappings between
// the words. Pure.
//
//   decide.ts Step (terminal)  →  PodOutcome (executor)  →  PodResult (events)  →  PodState (podCounts.ts)
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
// - A PodState is what is counted (podCounts.ts, read by the rollout record's counts,
//   `kwave_rollout_pods{state}`, the progress bars and `kwave status`): every pod that did not
//   reach its target and was not gone is a failure there, as it is for `maxFailed` and the wave
//   summaries.
import type { PodOutcome } from '../inplace/executor.js';
import type { FlowEnd } from '../inplace/flowEnd.js';
import type { Direction } from '../inplace/state.js';

export type PodResult = Exclude<FlowEnd, 'done'> | 'upgraded' | 'rolled-back';

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
