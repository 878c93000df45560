// How a run ends: its phase, exit code and one-line message, from what happened. Pure; the runner
// gathers the facts and emits the result as `rollout-end`.
import { ExitCode } from '../errors.js';
import type { NodeWait, RolloutPhase } from './events.js';

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

/** Either direction: why the run stopped writing, when its lease was lost (runnerDeps `abort`'s reason). */
interface LeaseFacts {
  lostLease?: string;
}

export type RunFacts = LeaseFacts &
  (
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
        /** Pods left untouched, or where their flow stood, because their node could not act; rollbacks not attempted say `rollback pending: …`. */
        leftForNodes?: readonly NodeWait[];
        /** Why the run ended before a gate: a wave short of its count, pods waiting for their node (waveFill.ts). */
        shortWave?: string;
      }
    | {
        direction: 'rollback';
        /** `kwave abort` halted the rollback: it reverted no more pods. */
        haltMessage?: string;
        interrupted: boolean;
        reverted: number;
        failed: number;
        leftForNodes?: readonly NodeWait[];
      }
  );

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
const listed = (waits: readonly NodeWait[]) =>
  waits.map((w) => `${w.pod} (${w.message.replace(/^rollback pending: /, '')})`).join(', ');
const pendingRollbacks = (waits: readonly NodeWait[] = []) =>
  waits.filter((w) => w.message.startsWith('rollback pending'));

/**
 * Worked examples:
 * - upgrade halted, `rollback: all` reverted 4 of 4 → RolledBack, exit 3, `halted: …; rolled back every upgraded pod`.
 * - upgrade halted, `rollback: failed` reverted 1 of 2 → Halted, exit 3, `…; rolled back 1 of 2 pods (the failed pods)`.
 * - upgrade with 3 pods deferred → Partial, exit 0.
 * - `kwave rollback` interrupted after 2 pods → Paused, exit 4.
 * - `kwave rollback` aborted (`kwave abort`) after 2 pods → Halted, exit 3 (a Job must not retry what a person stopped), `rollback halted: aborted by …; 2 pods rolled back, the rest still run the new image; run kwave rollback again to finish`.
 * - upgrade with demo-1's node NotReady throughout → Partial, exit 5, `partial: 2 upgraded; 1 pod left for a node that cannot act: default/demo-1 (node sim-node-2 is NotReady since 12s); …`.
 * - wave 1 of 2 short of its canary, its pod's node NotReady, a gate due → Partial, exit 5, `partial: 0 upgraded; wave 1 reached 0 of its 1 pod at target and has no pod left to take (…): the gates after it were not run; 1 pod left …`.
 * - upgrade halted, the failed pod's node down → Halted, exit 3, `…; rollback pending, run again once the node is back: default/demo-1 (…)`.
 * - the lease lost (another runner took it over), even in the middle of a halt's rollback → Paused, exit 4, `interrupted: lost the lease …; no pod was written after that; run the same plan again to resume`.
 */
export function outcomeOf(f: RunFacts): RunOutcome {
  if (f.lostLease !== undefined) {
    // Cut short wherever it stood (even mid-halt): the lease's next holder takes over from the
    // record and the pods, so the exit code says "run again", as for a signal.
    const again =
      f.direction === 'rollback' ? 'run kwave rollback again to finish' : 'run the same plan again to resume';
    return {
      phase: 'Paused',
      exitCode: ExitCode.INTERRUPTED,
      message: `interrupted: ${f.lostLease}; no pod was written after that; ${again}`,
    };
  }
  if (f.direction === 'rollback') {
    const pending = f.leftForNodes ?? [];
    const pendingText =
      pending.length > 0
        ? `; ${pending.length} pending, their node cannot act: ${listed(pending)}; run kwave rollback again once the node is back`
        : '';
    if (f.haltMessage !== undefined) {
      const failed = f.failed > 0 ? `, ${f.failed} failed` : '';
      return {
        phase: 'Halted',
        exitCode: ExitCode.HALTED,
        message: `rollback halted: ${f.haltMessage}; ${plural(f.reverted, 'pod')} rolled back${failed}, the rest still run the new image; run kwave rollback again to finish${pendingText}`,
      };
    }
    if (f.interrupted)
      return {
        phase: 'Paused',
        exitCode: ExitCode.INTERRUPTED,
        message: `interrupted: ${f.reverted} pods rolled back; run kwave rollback again to finish`,
      };
    if (f.failed > 0)
      return {
        phase: 'Halted',
        exitCode: ExitCode.HALTED,
        message: `rollback: ${f.reverted} pods rolled back, ${f.failed} failed${pendingText}`,
      };
    if (pending.length > 0)
      return {
        phase: 'Partial',
        exitCode: ExitCode.NODES_DOWN,
        message: `rolled back ${f.reverted} pods${pendingText}`,
      };
    return { phase: 'RolledBack', exitCode: ExitCode.OK, message: `rolled back ${f.reverted} pods` };
  }
  if (f.haltMessage !== undefined) {
    const rb = f.rollback;
    const all = rb !== undefined && rb.reverted === rb.pods;
    const what = rb?.scope === 'all' ? 'every upgraded pod' : 'the failed pods';
    const rolledBack = rb
      ? all
        ? `; rolled back ${what}`
        : `; rolled back ${rb.reverted} of ${rb.pods} pods (${what})`
      : '';
    const pending = pendingRollbacks(f.leftForNodes);
    const pendingText =
      pending.length > 0 ? `; rollback pending, run again once the node is back: ${listed(pending)}` : '';
    return {
      phase: rb?.scope === 'all' && all && pending.length === 0 ? 'RolledBack' : 'Halted',
      exitCode: ExitCode.HALTED,
      message: `halted: ${f.haltMessage}${rolledBack}${pendingText}`,
    };
  }
  if (f.interrupted)
    return {
      phase: 'Paused',
      exitCode: ExitCode.INTERRUPTED,
      message: 'interrupted: in-flight pods finished; run the same plan again to resume',
    };
  const left = f.leftForNodes ?? [];
  if (left.length > 0 || f.shortWave !== undefined) {
    const short = f.shortWave !== undefined ? `; ${f.shortWave}` : '';
    const leftText =
      left.length > 0 ? `; ${plural(left.length, 'pod')} left for a node that cannot act: ${listed(left)}` : '';
    return {
      phase: 'Partial',
      exitCode: ExitCode.NODES_DOWN,
      message: `partial: ${f.upgraded} upgraded${short}${leftText}; run the same plan again once the node is back`,
    };
  }
  if (f.deferred > 0)
    return {
      phase: 'Partial',
      exitCode: ExitCode.OK,
      message: `partial rollout complete: ${f.upgraded} upgraded, ${f.deferred} left for a later plan`,
    };
  const message =
    f.ran === 0
      ? 'nothing to do: every selected pod already runs the target images'
      : `completed: ${f.upgraded} pods upgraded${f.failed ? `, ${f.failed} failed (within maxFailed)` : ''}`;
  return { phase: 'Completed', exitCode: ExitCode.OK, message };
}
