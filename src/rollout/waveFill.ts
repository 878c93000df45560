// When a wave is done: its count of selected pods at the target, none in flight. Pods that wait
// for their node, failed or vanished do not count, so the wave takes the next pods in order whose
// nodes can act (stand-ins); only when none is left does it end short, and then no gate judges it.
// Pure: the wave's run (waveRun.ts) gathers the counts and carries out the verdict.
import type { WavePartition } from './waves.js';

/** What stands in a wave now. */
export interface WaveCounts {
  /** The wave's cumulative target: selected pods at the target image once it is done. */
  target: number;
  /** Selected pods at the target image now (already there before the run, plus upgraded since). */
  atTarget: number;
  /** Pods the wave took that have not ended yet (waiting for a slot or the budget, or in flight). */
  pending: number;
  /** Pod flows in flight in the run (a pod resumed after its node came back included). */
  inFlight: number;
  /** Pods not yet taken by any wave. */
  queued: number;
  /** Nothing new may start (a halt, a stop). */
  stopping: boolean;
}

export type WaveStep =
  /** Take this many more pods from the queue. */
  | { kind: 'take'; count: number }
  /** Wait for a pod to end (or the budget, or a node) and look again. */
  | { kind: 'wait' }
  | { kind: 'done' }
  /** Nothing left to take, nothing in flight, and fewer pods at target than the wave's count. */
  | { kind: 'short'; missing: number }
  /** Stopped, and nothing of the wave is pending any more. */
  | { kind: 'stopped' };

/**
 * The next step of a wave. Pods pending count as on their way to the target: the wave takes more
 * only when `atTarget + pending` falls short of the target (a pod failed, vanished, or waits for
 * its node). A pod in flight keeps the wave open even once the count is met: the gates after the
 * wave judge pods that have finished.
 */
export function waveStep(c: WaveCounts): WaveStep {
  if (c.stopping) return c.pending > 0 ? { kind: 'wait' } : { kind: 'stopped' };
  const need = c.target - c.atTarget - c.pending;
  if (need > 0 && c.queued > 0) return { kind: 'take', count: Math.min(need, c.queued) };
  if (c.pending > 0 || c.inFlight > 0) return { kind: 'wait' };
  if (c.atTarget >= c.target) return { kind: 'done' };
  return { kind: 'short', missing: c.target - c.atTarget };
}

/** Why a short wave is short: its pods that wait for their node, failed, or vanished. */
export interface Shortfall {
  wave: number;
  target: number;
  atTarget: number;
  /** Pods of the run waiting for their node (parked, or left for the next run). */
  waitingForNodes: number;
  /** Pods whose upgrade failed in this run (within maxFailed, or the run would have halted). */
  failed: number;
  /** Whether a gate is due after this wave. */
  gateDue: boolean;
}

export type ShortVerdict =
  /** No gate would judge the wave: the run goes on (the later waves have nothing left to take). */
  | { kind: 'go-on' }
  /** A node may come back: the run ends Partial (exit 5) before the gate; the next run goes on. */
  | { kind: 'partial'; message: string }
  /** Only failures (or vanished pods) made it short: halt before the gate, as failures halt. */
  | { kind: 'halt'; message: string };

/**
 * What a short wave means. With a gate due, the gate would judge fewer pods than the wave
 * promised, so the run ends there: `Partial` (exit 5) when pods wait for their node (a run once
 * the node is back can reach the count), else a halt (every pod was tried; failures within
 * maxFailed or pods that vanished left the count out of reach). With no gate due the run goes on.
 */
export function shortVerdict(s: Shortfall): ShortVerdict {
  if (!s.gateDue) return { kind: 'go-on' };
  const reached = `wave ${s.wave} reached ${s.atTarget} of its ${s.target} pod${s.target === 1 ? '' : 's'} at target and has no pod left to take`;
  if (s.waitingForNodes > 0)
    return {
      kind: 'partial',
      message: `${reached} (${s.waitingForNodes} waiting for their node): the gates after it were not run`,
    };
  const why = s.failed > 0 ? `${s.failed} failed within maxFailed` : 'pods vanished';
  return { kind: 'halt', message: `${reached} (${why}): the gates after it cannot judge the count it promised` };
}

/** One wave as `kwave plan` shows it with nodes that cannot act: the pods it would take instead. */
export interface StandInWave<T> {
  wave: number;
  /** Pods from later in the order that the run would upgrade in this wave. */
  standIns: T[];
  /** Pods of this wave that wait for their node, so others stand in for them. */
  waiting: T[];
}

/**
 * The waves as a run would fill them with the nodes as they are now: each takes its count from the
 * pods in order whose node can act (`waits` false), the others waiting their turn; once none is
 * left, a wave takes the waiting ones (the run leaves them waiting for their node). Only waves
 * with a stand-in or a waiting pod are listed. Example, pods a..f, targets 1 and 6, a's node down:
 * wave 1 takes b, which stands in for a; wave 2 takes c..f, then a, which waits.
 */
export function standIns<T>(partition: WavePartition<T>, waits: (p: T) => boolean): StandInWave<T>[] {
  const queue = [...partition.waves.flatMap((w) => w.pods), ...partition.deferred];
  const out: StandInWave<T>[] = [];
  const passedOver: T[] = [];
  let next = 0;
  for (const w of partition.waves) {
    const own = new Set(w.pods);
    const taken: T[] = [];
    while (taken.length < w.pods.length && next < queue.length) {
      const p = queue[next++]!;
      if (waits(p)) passedOver.push(p);
      else taken.push(p);
    }
    const parked = passedOver.splice(0, w.pods.length - taken.length);
    const entry = {
      wave: w.index,
      standIns: taken.filter((p) => !own.has(p)),
      waiting: [...w.pods.filter((p) => waits(p)), ...parked.filter((p) => !own.has(p))],
    };
    if (entry.standIns.length > 0 || entry.waiting.length > 0) out.push(entry);
  }
  return out;
}
