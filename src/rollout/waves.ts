// Partition of an ordered list of pods into waves. Pure; see docs/plan-reference.md, `spec.strategy` (waves).
import type { WaveSpec } from '../plan/types.js';
import { resolveAmount } from './amount.js';

export interface Wave<T> {
  /** 1-based position of the wave in the plan. Stable across runs: see `partitionWaves`. */
  index: number;
  /** Selected pods at the target image once this wave is complete (cumulative). */
  target: number;
  /** Pods to upgrade in this wave, in the order given. Never empty. */
  pods: T[];
}

export interface WavePartition<T> {
  /** All selected pods: the ones to do plus the ones already at the target image. */
  selected: number;
  alreadyDone: number;
  /** Waves with work to do, in order. Waves whose target the already-done pods meet are left out. */
  waves: Wave<T>[];
  /** Indexes of plan waves left out because already-done pods meet their targets. */
  satisfied: number[];
  /** Number of waves of the plan for this many selected pods ("wave i of n"). */
  waveCount: number;
  /** Pods past the last target (a partial rollout): left for a later plan. */
  deferred: T[];
}

/**
 * The cumulative targets of a wave spec for `selected` pods: how many selected pods are at the
 * target image after each wave.
 *
 * Cumulative targets (`waves`): `ceil(p × selected)` for a share, a count as written, capped at
 * `selected`, never below the previous target. When a target would add no pod to its wave (small
 * fleets), it is raised by one, so every wave has at least one pod; once a target reaches
 * `selected`, later waves have nothing left and are dropped. Worked example, `[1, "10%", "50%",
 * "100%"]`:
 * - 60 pods: ceil(6) = 6, ceil(30) = 30 → targets 1, 6, 30, 60.
 * - 5 pods: 1, ceil(0.5) = 1, ceil(2.5) = 3, 5 → the second would add nothing, raised to 2:
 *   targets 1, 2, 3, 5.
 * - 2 pods: 1, 1 → 2, then nothing left: targets 1, 2 (2 waves).
 * - 3 pods with `[1, "10%"]`: 1, 1 → 2: a partial rollout of 2 pods, 1 deferred.
 *
 * Equal waves (`waveSize`): the size is `ceil(p × selected)` for a share (at least 1), and the
 * targets are size, 2 × size, … up to `selected`: 12 pods with `"20%"` → size ceil(2.4) = 3 →
 * targets 3, 6, 9, 12.
 */
export function resolveTargets(spec: WaveSpec, selected: number): number[] {
  if (selected <= 0) return [];
  if (spec.kind === 'size') {
    const size = Math.max(1, resolveAmount(spec.size, selected, 'up'));
    const targets: number[] = [];
    for (let t = size; ; t += size) {
      targets.push(Math.min(t, selected));
      if (t >= selected) return targets;
    }
  }
  const targets: number[] = [];
  let previous = 0;
  for (const amount of spec.targets) {
    if (previous >= selected) break;
    const wanted = Math.min(selected, resolveAmount(amount, selected, 'up'));
    const target = Math.max(wanted, previous + 1);
    targets.push(target);
    previous = target;
  }
  return targets;
}

/**
 * Splits `todo` (pods not yet at the target image, already ordered) into the plan's waves.
 *
 * `alreadyDone` pods (selected, already at the target image) count toward the targets first:
 * wave i takes the next `max(alreadyDone, target_i) − max(alreadyDone, target_{i−1})` pods of
 * `todo`. A wave whose target the already-done pods meet is left out (listed in `satisfied`) and
 * keeps its number, so a resumed or continued rollout numbers its waves as the first run did.
 * Worked example, 100 pods, `[1, "10%", "50%", "100%"]` → targets 1, 10, 50, 100:
 * - nothing done yet: waves 1, 2, 3, 4 take 1, 9, 40, 50 pods;
 * - 30 done (say a crash during wave 3): waves 1 and 2 are satisfied; wave 3 takes 20, wave 4 50.
 * Pods after the last target (last target below 100%) are `deferred`.
 */
export function partitionWaves<T>(todo: readonly T[], alreadyDone: number, spec: WaveSpec): WavePartition<T> {
  const done = Math.max(0, Math.floor(alreadyDone));
  const selected = todo.length + done;
  const targets = resolveTargets(spec, selected);
  const waves: Wave<T>[] = [];
  const satisfied: number[] = [];
  let reached = done; // selected pods at the target once the waves so far are complete
  let next = 0; // next pod of `todo` to place
  targets.forEach((target, i) => {
    const take = Math.max(0, target - reached);
    if (take === 0) {
      satisfied.push(i + 1);
      return;
    }
    waves.push({ index: i + 1, target, pods: todo.slice(next, next + take) });
    next += take;
    reached = target;
  });
  return { selected, alreadyDone: done, waves, satisfied, waveCount: targets.length, deferred: todo.slice(next) };
}
