// The one count of a rollout's pods by state, folded from its events. The rollout record's
// `counts`, the `kwave_rollout_pods{state}` gauge, the terminal's progress bars and `kwave status`
// all read this fold, so they cannot disagree. Pure. docs/metrics.md ("Pods by state", which
// docs/record.md points at) describes the states in the words of the TSDoc below.
import type { Direction } from '../inplace/state.js';
import type { RolloutEvent } from './events.js';
import { isFailure, type PodResult } from './podEnd.js';

/**
 * The selected pods by state; every selected pod is in exactly one, so they sum to the selection.
 * The target is the run's: the plan's images in an upgrade, the images before the revision in a
 * `kwave rollback` run.
 */
export interface PodCounts {
  /**
   * Still to do: not started yet in this run (a pod waiting for its node, its wave or the budget);
   * a pod whose flow was interrupted (Ctrl-C, a lost lease); a pod reverted after a halt; and the
   * pods deferred beyond the last wave's target of a partial plan (the record's `deferred` says how many).
   */
  pending: number;
  /** Started in this run and not ended: its gate closed, its image patched, or its proof awaited. */
  in_progress: number;
  /**
   * At the target by this plan's revision: brought there in this run, or in an earlier run of a
   * resumed rollout (the pod carries this revision's state). In a `kwave rollback` run: reverted.
   */
  upgraded: number;
  /** Its flow failed in this run (`failed`, or the patch `refused`, or the pod held by another writer, `foreign`). */
  failed: number;
  /**
   * Needed nothing: already at the target when the run started and not through this revision
   * (or found so by its flow). In a `kwave rollback` run: a pod this revision never changed.
   */
  skipped: number;
  /** Deleted (or replaced) while its flow ran. */
  vanished: number;
}

export const POD_STATES = [
  'pending',
  'in_progress',
  'upgraded',
  'failed',
  'skipped',
  'vanished',
] as const satisfies readonly ('pending' | 'in_progress' | PodResult)[];
export type PodState = (typeof POD_STATES)[number];

export function emptyCounts(): PodCounts {
  return { pending: 0, in_progress: 0, upgraded: 0, failed: 0, skipped: 0, vanished: 0 };
}

/**
 * Where a finished pod is counted. `rolled-back` in `kwave rollback` is the run's work, so it is
 * counted where upgrades are. An aborted pod is still to do.
 */
function countedAs(result: PodResult): PodState {
  if (isFailure(result)) return 'failed';
  switch (result) {
    case 'upgraded':
    case 'rolled-back':
      return 'upgraded';
    case 'vanished':
      return 'vanished';
    case 'skipped':
      return 'skipped';
    default:
      return 'pending';
  }
}

/** What the fold needs besides the counts; the rollout record holds all of it (direction, rollback scope). */
export interface PodCountState {
  counts: PodCounts;
  direction: Direction;
  /**
   * Set by `rollback-start`: the pods being reverted. In an upgrade run that is a rollback after a
   * halt; in a `kwave rollback` run it is the run's own work.
   */
  rollback?: 'failed' | 'all';
}

export function initialPodCounts(): PodCountState {
  return { counts: emptyCounts(), direction: 'upgrade' };
}

/** `counts` with one pod moved from `from` to `to`; none moved when `from` has none, so the sum holds. */
function move(counts: PodCounts, from: PodState, to: PodState): PodCounts {
  if (from === to || counts[from] === 0) return counts;
  return { ...counts, [from]: counts[from] - 1, [to]: counts[to] + 1 };
}

const total = (c: PodCounts): number => POD_STATES.reduce((n, s) => n + c[s], 0);

/** Reverts after a halt in an upgrade run, which the counts follow only where a revert undoes an upgrade. */
const revertingAfterHalt = (s: PodCountState): boolean => s.direction === 'upgrade' && s.rollback !== undefined;

/**
 * The counts after `event`; the state itself when the event moves no pod.
 *
 * - `rollout-start`: in an upgrade, `alreadyDone` pods are at the target: the `upgradedEarlier`
 *   of them `upgraded`, the rest `skipped`; every other selected pod (deferred ones too) is
 *   `pending`. In a `kwave rollback` run every selected pod is `pending` until `rollback-start`
 *   names those to revert; the others are `skipped`.
 * - `pod-start` moves a pod from `pending` to `in_progress`; `pod-end` on by its result (countedAs).
 * - A rollback after a halt leaves the counts as the upgrade left them, except that with
 *   `rollback: all` a reverted pod is no longer `upgraded`: it goes back to `pending`. The events
 *   do not say whether a reverted pod had been upgraded or had failed; reverts are taken from
 *   `upgraded` while any are left, so the counts are exact once every revert has succeeded.
 *   `kwave_pod_rollbacks_total` and the record's `rollback` count the reverts themselves.
 */
export function countPods(s: PodCountState, event: RolloutEvent): PodCountState {
  switch (event.event) {
    case 'rollout-start': {
      if (event.direction === 'rollback')
        return { counts: { ...emptyCounts(), pending: event.selected }, direction: 'rollback' };
      const done = Math.min(event.alreadyDone, event.selected);
      const upgraded = Math.min(event.upgradedEarlier ?? 0, done);
      return {
        counts: { ...emptyCounts(), pending: event.selected - done, upgraded, skipped: done - upgraded },
        direction: 'upgrade',
      };
    }
    case 'rollback-start': {
      if (s.direction === 'upgrade') return { ...s, rollback: event.scope };
      const all = total(s.counts);
      const toRevert = Math.min(event.pods, all);
      return { ...s, rollback: event.scope, counts: { ...emptyCounts(), pending: toRevert, skipped: all - toRevert } };
    }
    case 'pod-start':
      return revertingAfterHalt(s) ? s : { ...s, counts: move(s.counts, 'pending', 'in_progress') };
    case 'pod-end':
      if (!revertingAfterHalt(s)) return { ...s, counts: move(s.counts, 'in_progress', countedAs(event.result)) };
      if (s.rollback === 'all' && event.result === 'rolled-back')
        return { ...s, counts: move(s.counts, 'upgraded', 'pending') };
      return s;
    default:
      return s;
  }
}
