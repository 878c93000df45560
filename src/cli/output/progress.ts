// What a person watching a rollout wants to know right now, folded from the event stream:
// counts, the current wave, pods in flight and their steps, and what the rollout is waiting
// for. Pure: `advance(state, event)` returns a new state; the TTY view renders it.
import type { RolloutEvent, RolloutPhase } from '../../rollout/events.js';
import { countPods, initialPodCounts, type PodCountState } from '../../rollout/podCounts.js';

type Waiting =
  | { kind: 'budget'; unavailable: number; budget: number; holders: string[] }
  | { kind: 'pdb'; pdb: string; pod: string; message: string }
  | { kind: 'pause'; gate: string; wave: number; untilMs: number }
  | { kind: 'approval'; gate: string; wave: number }
  | { kind: 'gate'; gate: string; wave: number; measurement?: { index: number; count: number; value: unknown } }
  | { kind: 'window'; wave: number; untilMs: number; opensAt: string }
  | { kind: 'paused'; wave: number; by: string };

interface InFlightPod {
  pod: string;
  step?: string;
  sinceMs: number;
}

interface CurrentWave {
  index: number;
  pods: number;
  target: number;
  /** Pods of this wave that ended, whatever the result. */
  ended: number;
  startedMs: number;
  endedMs?: number;
}

export interface ProgressState {
  plan: string;
  direction: 'upgrade' | 'rollback';
  startedMs?: number;
  selected: number;
  alreadyDone: number;
  deferred: number;
  waveCount: number;
  budget: number;
  concurrency: number;
  resumed: boolean;
  /** The selected pods by state: the one count (rollout/podCounts.ts) the record and the metrics show too. */
  pods: PodCountState;
  /** Pods reverted by the rollback after a halt (in an upgrade run). */
  rolledBack: number;
  /** Pods whose rollback after a halt did not end Ready on the old images. */
  rollbackFailed: number;
  wave?: CurrentWave;
  inFlight: InFlightPod[];
  /** Pods waiting for a node that cannot act, with the node and since when (ms) if known. */
  nodeWaits: { pod: string; node: string; sinceMs?: number }[];
  waiting?: Waiting;
  /** Sum and number of durations of successful pods, for the ETA. */
  podMsSum: number;
  podMsCount: number;
  halt?: string;
  rollback?: { pods: number; scope: 'failed' | 'all' };
  interrupted?: string;
  end?: { phase: RolloutPhase; message: string; durationMs: number };
}

export function initialProgress(plan: string): ProgressState {
  return {
    plan,
    direction: 'upgrade',
    selected: 0,
    alreadyDone: 0,
    deferred: 0,
    waveCount: 0,
    budget: 0,
    concurrency: 1,
    resumed: false,
    pods: initialPodCounts(),
    rolledBack: 0,
    rollbackFailed: 0,
    inFlight: [],
    nodeWaits: [],
    podMsSum: 0,
    podMsCount: 0,
  };
}

function timeOf(event: RolloutEvent): number {
  const t = Date.parse(event.time);
  return Number.isNaN(t) ? 0 : t;
}

/** The state after `event`. Unknown or out-of-order events leave what they cannot apply alone. */
export function advance(s: ProgressState, event: RolloutEvent): ProgressState {
  const pods = countPods(s.pods, event);
  const next = advanceBesidesCounts(s, event);
  return pods === s.pods ? next : { ...next, pods };
}

function advanceBesidesCounts(s: ProgressState, event: RolloutEvent): ProgressState {
  const t = timeOf(event);
  switch (event.event) {
    case 'rollout-start':
      return {
        ...s,
        plan: event.plan,
        direction: event.direction,
        startedMs: t,
        selected: event.selected,
        alreadyDone: event.alreadyDone,
        deferred: event.deferred,
        waveCount: event.waves,
        budget: event.budget,
        concurrency: event.concurrency,
        resumed: event.resumed,
      };
    case 'wave-start':
      return {
        ...s,
        waveCount: event.waves || s.waveCount,
        wave: { index: event.wave, pods: event.pods, target: event.target, ended: 0, startedMs: t },
        waiting: undefined,
      };
    case 'pod-start':
      return {
        ...s,
        inFlight: [...s.inFlight.filter((p) => p.pod !== event.pod), { pod: event.pod, sinceMs: t }],
        nodeWaits: s.nodeWaits.filter((w) => w.pod !== event.pod),
        waiting: s.waiting?.kind === 'budget' || s.waiting?.kind === 'pdb' ? undefined : s.waiting,
      };
    case 'pod-step':
      return { ...s, inFlight: s.inFlight.map((p) => (p.pod === event.pod ? { ...p, step: event.step } : p)) };
    case 'pod-end': {
      const next: ProgressState = { ...s, inFlight: s.inFlight.filter((p) => p.pod !== event.pod) };
      const goal = s.direction === 'upgrade' ? 'upgraded' : 'rolled-back';
      if (s.rollback && s.direction === 'upgrade') {
        // After a halt, pods end as the rollback leaves them.
        if (event.result === 'rolled-back') next.rolledBack += 1;
        else next.rollbackFailed += 1;
      } else if (event.result === goal) {
        next.podMsSum += event.durationMs;
        next.podMsCount += 1;
      }
      // Rollback pods after a halt belong to no wave's count.
      if (s.wave && event.wave === s.wave.index && s.rollback === undefined)
        next.wave = { ...s.wave, ended: s.wave.ended + 1 };
      return next;
    }
    case 'pod-waiting': {
      const since = event.since === undefined ? undefined : Date.parse(event.since);
      const entry = {
        pod: event.pod,
        node: event.node,
        ...(since !== undefined && !Number.isNaN(since) ? { sinceMs: since } : {}),
      };
      return { ...s, nodeWaits: [...s.nodeWaits.filter((w) => w.pod !== event.pod), entry] };
    }
    case 'pdb-wait':
      return { ...s, waiting: { kind: 'pdb', pdb: event.pdb, pod: event.pod, message: event.message } };
    case 'budget-wait':
      return {
        ...s,
        waiting: { kind: 'budget', unavailable: event.unavailable, budget: event.budget, holders: event.holders },
      };
    case 'wave-end':
      return {
        ...s,
        wave: s.wave && s.wave.index === event.wave ? { ...s.wave, endedMs: t } : s.wave,
        waiting: undefined,
      };
    case 'gate-start':
      return { ...s, waiting: { kind: 'gate', gate: event.gate, wave: event.wave } };
    case 'gate-pause':
      return { ...s, waiting: { kind: 'pause', gate: event.gate, wave: event.wave, untilMs: t + event.msLeft } };
    case 'gate-approval-wait':
      return { ...s, waiting: { kind: 'approval', gate: event.gate, wave: event.wave } };
    case 'gate-measurement':
      return {
        ...s,
        waiting: {
          kind: 'gate',
          gate: event.gate,
          wave: event.wave,
          measurement: { index: event.index, count: event.count, value: event.value },
        },
      };
    case 'gate-end':
      return { ...s, waiting: undefined };
    case 'window-wait':
      return { ...s, waiting: { kind: 'window', wave: event.wave, untilMs: t + event.msLeft, opensAt: event.opensAt } };
    case 'halt':
      return { ...s, halt: event.message, waiting: undefined };
    case 'rollback-start':
      return { ...s, rollback: { pods: event.pods, scope: event.scope }, waiting: undefined };
    case 'interrupt':
      return { ...s, interrupted: event.message, waiting: undefined };
    case 'paused':
      return { ...s, waiting: { kind: 'paused', wave: event.wave, by: event.by } };
    case 'resumed':
      return { ...s, waiting: s.waiting?.kind === 'paused' ? undefined : s.waiting };
    case 'rollout-end':
      return {
        ...s,
        end: { phase: event.phase, message: event.message, durationMs: event.durationMs },
        waiting: undefined,
        inFlight: [],
      };
    default:
      return s;
  }
}

/** Pods that should be at the target when this run is through (the deferred ones are not). */
export function goal(s: ProgressState): number {
  return Math.max(0, s.selected - s.deferred);
}

/** Pods at the target now: upgraded (reverted, in a rollback run) or needing nothing. */
export function atTarget(s: ProgressState): number {
  return Math.min(goal(s), s.pods.counts.upgraded + s.pods.counts.skipped);
}

/**
 * Time left for the pod work, from the mean duration of a successful pod and the pods that can
 * run at once (concurrency, the budget, and what is left). Pauses, approvals and windows are not
 * in it: their length is not known in advance. Undefined until a pod has finished.
 */
export function etaMs(s: ProgressState): number | undefined {
  if (s.podMsCount === 0) return undefined;
  // Pods still to do, but for those deferred beyond the last wave.
  const remaining = s.pods.counts.pending + s.pods.counts.in_progress - s.deferred;
  if (remaining <= 0) return 0;
  const parallel = Math.max(1, Math.min(s.concurrency, s.budget || s.concurrency, remaining));
  return Math.ceil(remaining / parallel) * (s.podMsSum / s.podMsCount);
}
