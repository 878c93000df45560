// The coordinator of a multi-cluster plan: one runner per cluster, each asking for its turn before
// each wave (clusterOrder.ts decides whose turn it is), and one halt for all: once any cluster
// halts, every waiting runner is told (and starts nothing more). It touches no cluster; the
// runners do.
import type { ClusterOrder } from '../plan/types.js';
import { mayStartWave, type ClusterPosition } from './clusterOrder.js';

/** What one cluster's runner is given (RunnerDeps.turns). */
export interface ClusterTurn {
  /** Waits until this cluster may start `wave`; false when the plan halted or `signal` aborted first. */
  startWave(wave: number, signal: AbortSignal): Promise<boolean>;
  /** This cluster has run its last wave: true once every cluster is done, false when the plan halts (or `signal` aborts) first. */
  allDone(signal: AbortSignal): Promise<boolean>;
  /** Aborted once any other cluster halts; its reason is a message naming that cluster. */
  planHalted: AbortSignal;
}

export class ClusterTurns {
  private readonly positions: ClusterPosition[];
  private readonly waiters = new Set<() => void>();
  private readonly halted = new AbortController();
  private haltedBy: { cluster: string; message: string } | undefined;

  constructor(
    private readonly order: ClusterOrder,
    private readonly names: readonly string[],
  ) {
    // Before a runner asks, it may be about to run wave 1: nothing ordered after that may start.
    this.positions = names.map(() => 1);
  }

  /** The cluster that halted the plan first, and why; undefined while none has. */
  get halt(): { cluster: string; message: string } | undefined {
    return this.haltedBy;
  }

  turn(index: number): ClusterTurn {
    return {
      startWave: (wave, signal) => {
        this.move(index, wave);
        return this.waitUntil(() => mayStartWave(this.order, this.positions, index, wave), signal);
      },
      allDone: (signal) => {
        this.move(index, 'done');
        return this.waitUntil(() => this.positions.every((p) => p === 'done'), signal);
      },
      planHalted: this.halted.signal,
    };
  }

  /** The runner of `index` returned (whatever its outcome): it holds back no other cluster. */
  finished(index: number): void {
    this.move(index, 'done');
  }

  /** Cluster `index` halted: the first halt stops the plan everywhere; later ones change nothing. */
  haltFrom(index: number, message: string): void {
    if (this.haltedBy) return;
    const cluster = this.names[index] ?? `#${index}`;
    this.haltedBy = { cluster, message };
    // Runners hear the halt (and record it) before their waits return false.
    this.halted.abort(`cluster ${cluster} halted: ${message}`);
    this.wake();
  }

  private move(index: number, position: ClusterPosition): void {
    this.positions[index] = position;
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  private async waitUntil(ready: () => boolean, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (this.haltedBy || signal.aborted) return false;
      if (ready()) return true;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.waiters.delete(done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.waiters.add(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}
