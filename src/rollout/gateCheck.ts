// The gates between waves as the runner sees them: when each is due, and the one call that checks
// it. How a gate is checked (pause, approval, Prometheus, webhook) is gates/'s business: gates/
// sits above rollout/ and plugs in through `CheckGate` (see `gateChecker` in gates/index.ts), so
// the runner knows the verdict and the progress callbacks, nothing of HTTP or PromQL.
import type { Gate } from '../plan/types.js';

/** `interrupted`: the stop signal fired (SIGINT/SIGTERM); the rollout should pause, not halt. */
export type GateResult = 'passed' | 'failed' | 'inconclusive' | 'interrupted';

/** One measurement as the runner reports it (`gate-measurement` events). */
interface MeasurementReport {
  value: unknown;
  phase: string;
  message: string;
}

/** What the runner gives a gate check: the wave, the stop signal, approvals and progress callbacks. */
interface GateCheckHooks {
  /** The wave just completed (1-based). */
  wave: number;
  signal: AbortSignal;
  onPause(msLeft: number): void;
  onAwaitingApproval(): void;
  onMeasurement(m: MeasurementReport, index: number, count: number): void;
  /** Absent when this run cannot receive approvals (an approval step then fails). */
  isApproved?: () => Promise<boolean>;
  waitForApproval?: (signal?: AbortSignal) => Promise<void>;
}

/** What a dry-run gate would have done had it not been a dry run (it passed instead). */
export interface WouldHave {
  result: 'failed' | 'inconclusive';
  /** The message the real gate would have halted with. */
  message: string;
}

export interface GateVerdict {
  result: GateResult;
  /** Starts with the gate name. */
  message: string;
  /** Set when a dry-run step passed only because it is a dry run. */
  wouldHave?: WouldHave;
}

export type CheckGate = (gate: Gate, hooks: GateCheckHooks) => Promise<GateVerdict>;

/** Whether a gate is checked after `wave` (1-based) of `waves`: `afterWaves`, else every wave but the last. */
export function gateAppliesAfterWave(gate: Pick<Gate, 'afterWaves'>, wave: number, waves: number): boolean {
  return gate.afterWaves ? gate.afterWaves.includes(wave) : wave < waves;
}
