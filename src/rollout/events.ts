// What a rollout reports as it goes: one vocabulary for the terminal (progress bars or plain
// lines), `-o json` (one object per event), the rollout record's history and the metrics.
// Events are values; whoever runs the rollout passes a sink.

import type { WouldHave } from './gateCheck.js';
import type { PodResult } from './podEnd.js';

export const ROLLOUT_PHASES = [
  'Pending',
  'Progressing',
  'Paused',
  'Halted',
  'Completed',
  'Partial',
  'RolledBack',
] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];

export interface WaveSummary {
  wave: number;
  pods: number;
  /**
   * Pods that reached the wave's target: upgraded in an upgrade run, reverted in a rollback run
   * (or a halted run's rollback waves). The name is the `-o json` and record field
   * (docs/output.md, docs/record.md), which stored records and users' scripts read.
   */
  upgraded: number;
  failed: number;
  vanished: number;
  /** From the wave's first pod start to its last pod's end; undefined if it did not run. */
  durationMs?: number;
}

/** Fields common to every event. */
interface Base {
  /** ISO time the event happened. */
  time: string;
  plan: string;
  /** The cluster, in a multi-cluster plan's events (its name in spec.clusters). */
  cluster?: string;
}

/** Why a run halted; `aborted` is `kwave abort`, `pre-pull` a pull that failed before any drain. */
export type HaltReason = 'failures' | 'gate' | 'cluster' | 'aborted' | 'pre-pull';

export type RolloutEventBody =
  /** `halted`: the halt message of the run this one carries on (a halted run resumed to finish its rollback). */
  | {
      event: 'rollout-start';
      revision: string;
      direction: 'upgrade' | 'rollback';
      selected: number;
      alreadyDone: number;
      /** Of `alreadyDone`, the pods this revision upgraded in an earlier run (they carry its state); absent: none. */
      upgradedEarlier?: number;
      waves: number;
      deferred: number;
      budget: number;
      concurrency: number;
      resumed: boolean;
      halted?: string;
    }
  | { event: 'wave-start'; wave: number; waves: number; pods: number; target: number }
  | { event: 'pod-start'; wave: number; pod: string }
  | { event: 'pod-step'; wave: number; pod: string; step: string; message: string }
  /** `unreadyMs`: how long the pod was not Ready during its flow (kwave_pod_unready_seconds), when it was. */
  | {
      event: 'pod-end';
      wave: number;
      pod: string;
      result: PodResult;
      reason?: string;
      message: string;
      durationMs: number;
      /** The flow resized a container in place (pods/resize); absent for an image change only. */
      resized?: true;
      unreadyMs?: number;
    }
  /**
   * The pod's node cannot act (NotReady, unreachable, gone): the pod is not started, or its flow
   * is left where it stands, until the node is back. `message`: `node sim-node-2 is NotReady since 12s`.
   */
  | {
      event: 'pod-waiting';
      wave: number;
      pod: string;
      node: string;
      since?: string;
      direction: 'upgrade' | 'rollback';
      message: string;
    }
  /** Nothing can start: other pods hold the unavailability budget. */
  | { event: 'budget-wait'; wave: number; unavailable: number; budget: number; holders: string[] }
  /** A PodDisruptionBudget holds `pod` back: draining it now would break the PDB. Once per pod and PDB. */
  | { event: 'pdb-wait'; wave: number; pod: string; pdb: string; message: string }
  /** strategy.prePull: the wave's images are being pulled on its nodes, before any pod is drained. */
  | { event: 'prepull-start'; wave: number; pods: number }
  | {
      event: 'prepull-end';
      wave: number;
      ok: boolean;
      pulled: string[];
      skipped: string[];
      message?: string;
      durationMs: number;
    }
  | { event: 'wave-end'; wave: number; summary: WaveSummary }
  | { event: 'gate-start'; wave: number; gate: string }
  | { event: 'gate-pause'; wave: number; gate: string; msLeft: number }
  | { event: 'gate-approval-wait'; wave: number; gate: string }
  /** `dryRun`: the measurement of a dry-run gate (it never halts; `kwave_gate_measurements_total{dry_run}`). */
  | {
      event: 'gate-measurement';
      wave: number;
      gate: string;
      index: number;
      count: number;
      value: unknown;
      phase: string;
      message: string;
      dryRun?: boolean;
    }
  /** `wouldHave`: a dry-run gate passed, but would have failed (or been inconclusive) for real. */
  | {
      event: 'gate-end';
      wave: number;
      gate: string;
      result: 'passed' | 'failed' | 'inconclusive' | 'interrupted';
      message: string;
      wouldHave?: WouldHave;
    }
  | { event: 'window-wait'; wave: number; msLeft: number; opensAt: string }
  /** `aborted`: `kwave abort PLAN` (from anywhere), carried out as a halt on failure would be. */
  | { event: 'halt'; wave: number; reason: HaltReason; message: string }
  /**
   * `kwave pause PLAN` seen: no new pod starts, `inFlight` pods finish, the run waits. `by` and
   * `at` are the request's (who asked, from where, and when).
   */
  | { event: 'paused'; wave: number; by: string; at: string; inFlight: number }
  /** `kwave resume PLAN` seen: the run goes on. */
  | { event: 'resumed'; wave: number; by: string; at: string }
  /** `forced`: `--force` rolling back pods another revision of the plan left mid-flight, before this revision starts. */
  | { event: 'rollback-start'; pods: number; scope: 'failed' | 'all'; forced?: true }
  | { event: 'interrupt'; message: string }
  | {
      event: 'rollout-end';
      phase: RolloutPhase;
      exitCode: number;
      message: string;
      waves: WaveSummary[];
      durationMs: number;
      waitingForNodes?: NodeWait[];
    };

/** A pod left untouched (or left where its flow stood) because its node could not act. */
export interface NodeWait {
  pod: string;
  node: string;
  /** ISO time the node stopped acting, when it says. */
  since?: string;
  message: string;
}

export type RolloutEvent = Base & RolloutEventBody;

export type EventSink = (event: RolloutEvent) => void;
