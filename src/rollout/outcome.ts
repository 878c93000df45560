// How a run ends: its phase, exit code and one-line message, from what happened. Pure; the runner
// gathers the facts and emits the result as `rollout-end`.
import { ExitCode } from '../errors.js';
import type { RolloutPhase } from './events.js';

export interface RunOutcome {
  phase: RolloutPhase;
  exitCode: number;
  message: string;
}

/** What a halted upgrade's rollback did: the pods it set out to revert and those it did. */
export interface RollbackDone {
  scope: 'failed' | 'all';
  pods: number;
  reverted: number;
}

export type RunFacts =
  | {
      direction: 'upgrade';
      /** Why the rollout halted, if it did. */
      haltMessage?: string;
      rollback?: RollbackDone;
      /** A stop or abort signal fired. */
      interrupted: boolean;
      /** Selected pods beyond the last wave's target. */
      deferred: number;
      upgraded: number;
      failed: number;
      /** Pods the waves ran (0: everything was already at target). */
      ran: number;
    }
  | { direction: 'rollback'; interrupted: boolean; reverted: number; failed: number };

/**
 * Worked examples:
 * - upgrade halted, `rollback: all` reverted 4 of 4 → RolledBack, exit 3, `halted: …; rolled back every upgraded pod`.
 * - upgrade halted, `rollback: failed` reverted 1 of 2 → Halted, exit 3, `…; rolled back 1 of 2 pods (the failed pods)`.
 * - upgrade with 3 pods deferred → Partial, exit 0.
 * - `kwave rollback` interrupted after 2 pods → Paused, exit 4.
 */
export function outcomeOf(f: RunFacts): RunOutcome {
  if (f.direction === 'rollback') {
    if (f.interrupted) return { phase: 'Paused', exitCode: ExitCode.INTERRUPTED, message: `interrupted: ${f.reverted} pods rolled back; run kwave rollback again to finish` };
    if (f.failed > 0) return { phase: 'Halted', exitCode: ExitCode.HALTED, message: `rollback: ${f.reverted} pods rolled back, ${f.failed} failed` };
    return { phase: 'RolledBack', exitCode: ExitCode.OK, message: `rolled back ${f.reverted} pods` };
  }
  if (f.haltMessage !== undefined) {
    const rb = f.rollback;
    const all = rb !== undefined && rb.reverted === rb.pods;
    const what = rb?.scope === 'all' ? 'every upgraded pod' : 'the failed pods';
    const rolledBack = rb ? (all ? `; rolled back ${what}` : `; rolled back ${rb.reverted} of ${rb.pods} pods (${what})`) : '';
    return { phase: rb?.scope === 'all' && all ? 'RolledBack' : 'Halted', exitCode: ExitCode.HALTED, message: `halted: ${f.haltMessage}${rolledBack}` };
  }
  if (f.interrupted) return { phase: 'Paused', exitCode: ExitCode.INTERRUPTED, message: 'interrupted: in-flight pods finished; run the same plan again to resume' };
  if (f.deferred > 0) return { phase: 'Partial', exitCode: ExitCode.OK, message: `partial rollout complete: ${f.upgraded} upgraded, ${f.deferred} left for a later plan` };
  const message =
    f.ran === 0
      ? 'nothing to do: every selected pod already runs the target images'
      : `completed: ${f.upgraded} pods upgraded${f.failed ? `, ${f.failed} failed (within maxFailed)` : ''}`;
  return { phase: 'Completed', exitCode: ExitCode.OK, message };
}
