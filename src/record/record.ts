// The rollout record: what a person (or a later run) can learn about a plan's rollout from the
// cluster alone. It lives in the ConfigMap `kwave-<plan>` in the plan's first target namespace.
// This file is the record's shape. reducer.ts folds the runner's events into it, codec.ts encodes
// it to and decodes (and validates) it from ConfigMap data: all three are pure. store.ts reads and
// writes the ConfigMap; lease/runLock.ts holds the Lease of the same name.
//
// Keys of the record ConfigMap's data (the runner's):
//   plan.yaml        the plan text the runner was started with, its webhook and receiver URLs
//                    redacted (plan/redactPlanText.ts)
//   status.json      the record below, without plan text and people's decisions
// People's decisions live in a ConfigMap of their own, `kwave-<plan>.control` in the plan's
// `controlNamespace`, which the runner only reads, so RBAC can keep the runner's identity from
// approving, pausing, resuming or aborting its own rollout (docs/operating.md):
//   approval.wave-N  {"by", "user", "at", "revision"} for wave N's approval gate  (`kwave approve`)
//   control.json     pause / resume / abort requests (control.ts)       (`kwave pause|resume|abort`)
// Records written before decisions moved out hold the same two keys in the record ConfigMap
// itself: `kwave status` still shows them, but a run no longer acts on them, and its first write
// of the record drops them.
import { ownedBy, type Direction } from '../inplace/state.js';
import type { NodeWait, RolloutEvent, RolloutPhase, WaveSummary } from '../rollout/events.js';
import { emptyCounts, type PodCounts } from '../rollout/podCounts.js';
import { redactPlanText } from '../plan/redactPlanText.js';
import type { ControlState } from './control.js';

export const RECORD_SCHEMA = 'kwave.dev/rollout-record/v1';
export const PLAN_KEY = 'plan.yaml';
export const STATUS_KEY = 'status.json';
export const APPROVAL_KEY_PREFIX = 'approval.wave-';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const PLAN_LABEL = 'kwave.dev/plan';

/** Bounds that keep the record below a ConfigMap's 1 MiB, whatever the fleet size (bounds.ts). */
export const LIMITS = {
  history: 100,
  failures: 50,
  gates: 50,
  measurements: 20,
  waveSummaries: 1000,
  /** Pods in flight listed in status.json (the record in memory keeps them all). */
  inFlight: 100,
} as const;

/** The last `n` entries of `list` (the list itself when it is short enough). */
export const keepLast = <T>(list: T[], n: number): T[] => (list.length > n ? list.slice(list.length - n) : list);

export interface InFlightPod {
  /** `namespace/name`, as the runner names pods in events. */
  pod: string;
  wave: number;
  /** The last step the runner reported (`pod-step`), or `started`. */
  step: string;
  /** ISO time the pod started. */
  since: string;
  /** ISO time of the last step change. */
  stepAt: string;
}

export interface Failure {
  pod: string;
  wave: number;
  reason: string;
  message: string;
  at: string;
}

type GateResult = 'running' | 'waiting-approval' | 'passed' | 'failed' | 'inconclusive' | 'interrupted';

export interface GateMeasurement {
  index: number;
  count: number;
  /** The measured value; a vector cut to its first values (bounds.ts). */
  value: unknown;
  /** The values of a vector left out of `value`. */
  valuesLeftOut?: number;
  phase: string;
  message: string;
  at: string;
}

export interface GateRecord {
  wave: number;
  gate: string;
  result: GateResult;
  message: string;
  /** ISO time of the gate's start, then of its end. */
  at: string;
  measurements?: GateMeasurement[];
  /** A dry-run gate: its measurements never halt the rollout. */
  dryRun?: boolean;
  /** A dry-run gate that passed but would have failed (or been inconclusive) for real. */
  wouldHave?: { result: 'failed' | 'inconclusive'; message: string };
}

/** What the rollout waits for between waves, if anything; `paused`: for `kwave resume` (at any point, not only between waves). */
export interface Waiting {
  kind: 'pause' | 'approval' | 'window' | 'paused';
  wave: number;
  gate?: string;
  /** ISO time the wait began. */
  since: string;
  /** ISO time the pause ends or the window opens; absent for approvals. */
  until?: string;
  /** paused: who paused it. */
  by?: string;
}

/** A pod held back by a PodDisruptionBudget: draining it would break the PDB. */
interface PdbHold {
  pod: string;
  /** `namespace/name` of the PDB. */
  pdb: string;
  message: string;
  /** ISO time the PDB began to hold pods back. */
  since: string;
}

export interface Approval {
  /** Who approved: the API server's name for them and `user@host` (`alice (alice@laptop)`), or `user@host` alone. */
  by: string;
  /** The API server's name for the approver (SelfSubjectReview), when it told. */
  user?: string;
  /** ISO time. */
  at: string;
  /** The plan revision the approval was given for, when known. */
  revision?: string;
}

export interface HistoryEntry {
  time: string;
  event: RolloutEvent['event'];
  message: string;
}

/** Pods reverted after a halt (`rollback: failed | all`), kept apart from the counts. */
interface RollbackProgress {
  scope: 'failed' | 'all';
  pods: number;
  done: number;
  failed: number;
}

export interface RolloutRecord {
  plan: string;
  revision: string;
  /** The plan file's text, its webhook and receiver URLs redacted: stored under its own key, not in status.json. */
  planText: string;
  phase: RolloutPhase;
  direction: Direction;
  /** Current wave, 1-based; 0 before the first. */
  wave: number;
  waves: number;
  selected: number;
  /** Pods selected but beyond the last wave's target (a partial plan). */
  deferred: number;
  counts: PodCounts;
  inFlight: InFlightPod[];
  /** Pods in flight in all, when `inFlight` lists only the longest in flight (status.json keeps LIMITS.inFlight). */
  inFlightCount?: number;
  /** Pods waiting for (or, once the run ended, left for) a node that cannot act. Optional: older records lack it. */
  waitingForNodes?: NodeWait[];
  /** The latest pod a PodDisruptionBudget holds back, while it waits. Optional: older records lack it. */
  heldByPdb?: PdbHold;
  failures: Failure[];
  /** Failures in all, including those dropped from the bounded list. */
  failuresTotal: number;
  gates: GateRecord[];
  waiting?: Waiting;
  rollback?: RollbackProgress;
  /** Approvals by wave: read from the decisions ConfigMap, never written by the runner. */
  approvals: Record<number, Approval>;
  /** Remote-control requests: read from the decisions ConfigMap, never written by the runner; absent when none was made. */
  control?: ControlState;
  waveSummaries: WaveSummary[];
  history: HistoryEntry[];
  /** The last message that explains the phase (halt reason, final summary). */
  message?: string;
  exitCode?: number;
  startedAt: string;
  updatedAt: string;
  endedAt?: string;
  /** Identity of the runner that wrote the record (`user@host pid N`). */
  holder: string;
  /** What the last write left out to fit the ConfigMap (bounds.ts), when it left out anything. */
  trimmed?: string[];
}

/** The ConfigMap name of a plan's record (and of its lease). */
export function recordName(plan: string): string {
  return `kwave-${plan}`;
}

/**
 * The ConfigMap name of a plan's decisions. The dot keeps it apart from every record name (plan
 * names are DNS labels, without dots), even in the same namespace.
 */
export function controlName(plan: string): string {
  return `${recordName(plan)}.control`;
}

export interface NewRecordInput {
  plan: string;
  revision: string;
  /** The plan file's text as written: the record keeps it with its URLs redacted. */
  planText: string;
  holder: string;
  /** ISO time. */
  now: string;
  direction?: Direction;
}

/** A record before the first event: phase Pending, wave 0. */
export function newRecord(input: NewRecordInput): RolloutRecord {
  return {
    plan: input.plan,
    revision: input.revision,
    planText: redactPlanText(input.planText),
    phase: 'Pending',
    direction: input.direction ?? 'upgrade',
    wave: 0,
    waves: 0,
    selected: 0,
    deferred: 0,
    counts: emptyCounts(),
    inFlight: [],
    failures: [],
    failuresTotal: 0,
    gates: [],
    approvals: {},
    waveSummaries: [],
    history: [],
    startedAt: input.now,
    updatedAt: input.now,
    holder: input.holder,
  };
}

/**
 * The record a run starts from. Same revision as the stored record: that record, continued
 * (a resume keeps its gates, failures and history; `rollout-start` resets counts and pods in
 * flight). Another revision, or none stored: a new record that keeps only the history.
 */
export function startRecord(previous: RolloutRecord | undefined, input: NewRecordInput): RolloutRecord {
  if (previous && ownedBy(previous, input.plan, input.revision)) {
    return { ...previous, planText: redactPlanText(input.planText), holder: input.holder, updatedAt: input.now };
  }
  const fresh = newRecord(input);
  return previous ? { ...fresh, history: previous.history } : fresh;
}
