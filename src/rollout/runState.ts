// What every part of one run shares: the plan and deps, the event sink, the budget tracker, and
// the facts that decide whether anything more may start (stop and abort signals, a halt, a fatal
// error) with the failure totals that can halt it. The wave script (runner.ts), the pod runs
// (podRunner.ts) and the node waits (nodeWaits.ts) read and write it; none of them keeps a copy.
import { KwaveError } from '../errors.js';
import type { Plan } from '../plan/types.js';
import { exceedsMaxFailed } from './budget.js';
import type { BudgetTracker } from './budgetTracker.js';
import type { EventSink, HaltReason, RolloutEventBody } from './events.js';
import type { ControlNote, RunnerDeps } from './runnerDeps.js';

export interface Failure {
  pod: string;
  reason: string;
  message: string;
}

export class RunState {
  readonly now: () => number;
  /** Set by the runner once the fleet is selected (before any pod runs). */
  budget!: BudgetTracker;
  /** Why the rollout halted, once it has. */
  haltMessage: string | undefined;
  /** Pods this run upgraded (rollbacks not counted). */
  upgraded = 0;
  /** Pods whose upgrade failed, in order. */
  readonly failures: Failure[] = [];
  currentWave = 0;
  maxFailed = 0;
  /** A rollback after a halt runs to its end whatever stopped the rollout; only a hard abort or a fatal error stops it. */
  rollingBackAfterHalt = false;
  /** Finishing the pods a killed halting run left in flight (`resumeHalt`): they run although the rollout is halted. */
  finishingAfterHalt = false;
  /** `--force`: the revision each forced pod's rollback runs under (another revision of the plan), by `namespace/name`. */
  readonly forcedRevision = new Map<string, string>();
  /** Pods whose rollback failed (forced or after a halt), in order. */
  readonly rollbackFailures: Failure[] = [];
  /** An unexpected error of one pod's flow (403, a long outage): nothing more starts, then it is rethrown. */
  fatal: unknown;
  /** Set while `kwave pause` holds the run back (remoteControl.ts). */
  pausedBy: ControlNote | undefined;
  /** Aborted by a halt: ends waits that are not pod flows (gates, the window) at once. */
  private readonly halted = new AbortController();

  constructor(
    readonly plan: Plan,
    readonly deps: RunnerDeps,
  ) {
    this.now = deps.now ?? Date.now;
  }

  /** The last event's time and its ISO text: events come in bursts within one millisecond. */
  private stamp = { ms: NaN, iso: '' };

  emit(body: RolloutEventBody): void {
    const ms = this.now();
    if (ms !== this.stamp.ms) this.stamp = { ms, iso: new Date(ms).toISOString() };
    this.deps.sink({ time: this.stamp.iso, plan: this.plan.name, ...body } as Parameters<EventSink>[0]);
  }

  /** Why the run may write no more, when the hard abort came from a lost lease (its reason, KwaveError LEASE_LOST). */
  get lostLease(): string | undefined {
    const reason: unknown = this.deps.abort?.aborted ? this.deps.abort.reason : undefined;
    return reason instanceof KwaveError && reason.code === 'LEASE_LOST' ? reason.message : undefined;
  }

  get interrupted(): boolean {
    return this.deps.stop.aborted || (this.deps.abort?.aborted ?? false);
  }

  /** Whether nothing new may start: a hard abort or a fatal error always; a stop or a halt unless rolling back after a halt. */
  get stopping(): boolean {
    if (this.deps.abort?.aborted || this.fatal !== undefined) return true;
    if (this.finishingAfterHalt) return false;
    return !this.rollingBackAfterHalt && (this.deps.stop.aborted || this.haltMessage !== undefined);
  }

  /** Whether a pause holds back new pod starts and waves: not once halted, never a rollback after a halt. */
  get holdingStarts(): boolean {
    return this.pausedBy !== undefined && this.haltMessage === undefined && !this.rollingBackAfterHalt;
  }

  /** The stop signal, or a halt: what a gate or a window wait should end on. */
  get waitSignal(): AbortSignal {
    return AbortSignal.any([this.deps.stop, this.halted.signal]);
  }

  /** Keys of the pods whose upgrade failed. */
  failedPods(): Set<string> {
    return new Set(this.failures.map((f) => f.pod));
  }

  /** Stops the rollout: nothing new starts, pods in flight finish. */
  halt(reason: HaltReason, message: string, wave = this.currentWave): void {
    if (this.haltMessage !== undefined) return;
    this.haltMessage = message;
    this.emit({ event: 'halt', wave, reason, message });
    this.halted.abort();
    // A halt from another cluster may come before this run has selected its fleet.
    this.budget?.wake();
  }

  /** Halts once more pods failed than `maxFailed` allows. */
  haltIfTooManyFailed(): void {
    if (this.haltMessage !== undefined || !exceedsMaxFailed(this.failures.length, this.maxFailed)) return;
    const n = this.failures.length;
    const list = this.failures.map((f) => `${f.pod} (${f.reason})`).join(', ');
    this.halt('failures', `${n} pod${n === 1 ? '' : 's'} failed, more than maxFailed ${this.maxFailed}: ${list}`);
  }
}
