// What the runner (runner.ts) is given and what it returns: the pod cache and writer it drives,
// the signals that stop it, the gate checker and approvals it consults, and its result.
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { Sleep } from '../sleep.js';
import type { PodReader, PodWriter } from '../inplace/executor.js';
import type { PodChangeFeed } from './budgetTracker.js';
import type { EventSink, WaveSummary } from './events.js';
import type { NodeSighting } from './nodeHealth.js';
import type { CheckGate } from './gateCheck.js';
import type { ClusterTurn } from './clusterTurns.js';
import type { RunOutcome } from './outcome.js';
import type { NodeZones } from './select.js';

/** The pod cache as the runner uses it: reads for the flows, and change notifications for the budget. */
export interface FleetView extends PodReader {
  list(namespace?: string): V1Pod[];
  onChange: PodChangeFeed;
}

/** The node cache as the runner uses it (NodeCache fits): where each pod's node stands. */
export interface NodeView {
  get(name: string): NodeSighting | undefined;
  onChange(listener: (name: string) => void): () => void;
}

/** The PodDisruptionBudgets of the target namespaces and every pod they may select (PdbCache and a pod cache fit). */
export interface DisruptionBudgetView {
  pdbs(): readonly V1PodDisruptionBudget[];
  /** Every pod of the target namespaces, not only the plan's: a PDB counts all the pods it selects. */
  pods(): readonly V1Pod[];
  /** Calls `listener` after a change of a PDB or of one of those pods. Returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

/** What a wave's pre-pull did (strategy.prePull). */
export interface PrePullReport {
  ok: boolean;
  /** Why it failed. */
  message?: string;
  /** Nodes whose puller pulled the images. */
  pulled: string[];
  /** Nodes that had every image already (status.images). */
  skipped: string[];
}

interface Approvals {
  isApproved(wave: number): Promise<boolean>;
  waitForApproval(wave: number, signal?: AbortSignal): Promise<void>;
}

/** Who asked for a remote-control action, and when. */
export interface ControlNote {
  by: string;
  /** ISO time of the request. */
  at: string;
}

/**
 * Remote control (`kwave pause | resume | abort` from anywhere), as the runner sees it; the shell
 * follows the rollout record and answers. A pause: no new pod starts, pods in flight finish, the
 * run waits. An abort: the run halts as on a failure and applies the rollback policy.
 */
export interface RemoteControl {
  /** The pause in force for this run, if any. */
  paused(): ControlNote | undefined;
  /** The abort addressed to this run, once one came. */
  aborted(): ControlNote | undefined;
  /** The latest resume request (who ended the last pause). */
  resumed(): ControlNote | undefined;
  /** Calls `listener` whenever either may have changed; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

export interface RunnerDeps {
  writer: PodWriter;
  view: FleetView;
  /** Without it every node is taken to be able to act. */
  nodes?: NodeView;
  zones?: NodeZones;
  sink: EventSink;
  now?: () => number;
  /** Waits for the window to open (`Sleep`: false when `stop` fired first). */
  sleep: Sleep;
  /** First SIGINT/SIGTERM: start nothing new, let in-flight pods finish, then Paused. */
  stop: AbortSignal;
  /** Second signal, or the lease lost (its reason a KwaveError LEASE_LOST): leave at once; flows stop between steps and stay resumable. */
  abort?: AbortSignal;
  approvals?: Approvals;
  /** Pulls a wave's target images on its pods' nodes (strategy.prePull); without it such a plan's waves fail before draining. */
  prePull?: (wave: number, pods: readonly V1Pod[]) => Promise<PrePullReport>;
  /** PDBs to respect (`strategy.respectPodDisruptionBudgets`); without it only the plan's budget holds pods back. */
  disruptionBudgets?: DisruptionBudgetView;
  /** Checks one gate (`gateChecker` of gates/index.ts). Without it, a plan's gate fails: nothing could check it. */
  checkGate?: CheckGate;
  /** Gates of the wave before `wave` already passed in an earlier run (from the rollout record). */
  gatesPassed?: (wave: number) => boolean;
  /** Pause and abort from other processes; without it the run has neither. */
  control?: RemoteControl;
  /** Told the not-Ready count (selected pods, in-flight ones included) whenever it may have changed. */
  onUnavailable?: (unavailable: number, budget: number) => void;
  /**
   * A halt an earlier run of this revision decided but did not see through (it was killed while
   * its in-flight pods finished or its rollback ran; from the rollout record). The run carries
   * that halt on instead of upgrading: in-flight pods finish, the rollback the plan asks for is
   * done, and pods that halt already rolled back are left alone (upgrading them again would patch
   * them twice).
   */
  resumeHalt?: UnfinishedHalt;
  /**
   * Makes the halt durable (the record written) before the first rollback patch, so a run killed
   * mid-rollback is resumed as that halt (`resumeHalt`), not as an upgrade. Errors are reported by
   * the caller; the rollback goes on regardless (failed pods must not stay drained).
   */
  persistHalt?: () => Promise<void>;
  /**
   * `--force`: pods another revision of this plan left mid-flight, rolled back by that revision's
   * flow before this revision starts — under the same budget and concurrency, with events (so
   * metrics and the record see them). One that cannot be rolled back halts the run (exit 3).
   */
  force?: readonly ForcedRollback[];
  /** One cluster of a multi-cluster plan: its turns before each wave, and the plan's halt. */
  turns?: ClusterTurn;
}

/** A pod `--force` rolls back, and the revision whose state it carries. */
export interface ForcedRollback {
  namespace: string;
  name: string;
  revision: string;
}

/** A halt to carry on: its message, its wave, and the pods that failed in it (`namespace/name`). */
export interface UnfinishedHalt {
  message: string;
  wave: number;
  failed: readonly string[];
}

export interface RunResult extends RunOutcome {
  waves: WaveSummary[];
}
