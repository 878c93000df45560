// How long a run gives a NotReady node to come back (`strategy.nodeGraceSeconds`): a node NotReady
// for less than that may be flapping (a late heartbeat, a control-plane restart), so the run does
// not give up on its pods before the grace runs out, and wakes the budget's waiters when it does.
import type { NodeDown } from './nodeHealth.js';
import type { RunState } from './runState.js';

export class NodeGrace {
  /** When each NotReady spell's grace ends on this clock, by `node@sinceMs` (a new spell gets its own). */
  private readonly ends = new Map<string, number>();
  /** Cancels the wake-ups once the run is over. */
  private readonly closed = new AbortController();

  constructor(private readonly run: RunState) {}

  /**
   * Whether the run still gives `down`'s node time to come back: NotReady (not gone) for less than
   * `nodeGraceMs` since its transition. While it does, a wake-up is due when the grace runs out.
   */
  inGrace(down: NodeDown): boolean {
    const { health } = down;
    if (health.state !== 'NotReady' || health.sinceMs === undefined) return false;
    const spell = `${down.node}@${health.sinceMs}`;
    let end = this.ends.get(spell);
    if (end === undefined) {
      // Counted from the transition on the cluster's clock, but never more than the grace on
      // ours: a runner whose clock is behind the cluster's must not wait longer.
      const grace = this.run.plan.strategy.nodeGraceMs;
      const now = this.run.now();
      end = now + Math.min(grace, Math.max(0, health.sinceMs + grace - now));
      this.ends.set(spell, end);
      if (end > now) void this.run.deps.sleep(end - now, this.closed.signal).then(() => this.run.budget.wake());
    }
    return this.run.now() < end;
  }

  /** The run is over: no wake-up is left pending. */
  close(): void {
    this.closed.abort();
  }
}
