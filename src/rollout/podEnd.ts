// How one pod's flow ended, in the three vocabularies that carry different meaning, and the only
// mappings between them. Pure.
//
//   decide.ts Step (terminal)  →  PodOutcome (executor)  →  PodResult (events)  →  PodState (podCounts.ts)
//   done                          done                      upgraded | rolled-back  upgraded (see below)
//   failed                        failed                    failed                  failed
//   refuse                        refused                   refused                 failed
//   foreign                       foreign                   foreign                 failed
//   vanished                      vanished                  vanished                vanished
//   skip                          skipped                   skipped                 skipped
//   (signal or cache closed)      aborted                   aborted                 pending (still to do)
//
// - A Step is what decide.ts chose to do next; its terminal kinds end a flow. The executor
//   (inplace/executor.ts) maps them one to one onto a PodOutcome, adding the writes made.
// - A PodResult is what the rollout reports: a `done` outcome is named by the flow's direction.
// - A PodState is what is counted (podCounts.ts, read by the rollout record's counts,
//   `kwave_rollout_pods{state}`, the progress bars and `kwave status`): every pod that did not
//   reach its target and was not gone is a failure there, as it is for `maxFailed` and the wave summaries.
import type { PodOutcome } from '../inplace/executor.js';
import type { Direction } from '../inplace/state.js';

export type PodResult =
  'upgraded' | 'rolled-back' | 'failed' | 'vanished' | 'skipped' | 'refused' | 'foreign' | 'aborted';

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
