// The live side of the unavailability budget: which selected pods are not Ready now (from the
// pod cache's change feed) and which are in flight, and a wake-up for everyone waiting on either.
// The rule itself (may one more start?) is budget.ts; this only keeps its inputs current.
import type { V1Pod } from '@kubernetes/client-node';
import { isPodReady, podKey, type PodName } from '../inplace/podView.js';
import type { StartRequest } from './budget.js';

export type PodChangeFeed = (listener: (change: { pod: V1Pod; type: 'added' | 'modified' | 'deleted' }) => void) => () => void;

export class BudgetTracker {
  private readonly inFlight = new Set<string>();
  /** Selected pods not Ready now. */
  private readonly notReady = new Set<string>();
  private readonly selected: ReadonlySet<string>;
  /** Pods a rollback is about to revert: drained failures whose revert frees, not takes, budget. */
  private exempt: ReadonlySet<string> = new Set();
  private wakeups: (() => void)[] = [];

  constructor(
    selected: readonly (PodName & { pod: V1Pod })[],
    readonly budget: number,
    private readonly concurrency: number,
    /** Told the not-Ready count (in-flight pods included) whenever it may have changed. */
    private readonly onUnavailable?: (unavailable: number, budget: number) => void,
  ) {
    this.selected = new Set(selected.map(podKey));
    for (const s of selected) if (!isPodReady(s.pod)) this.notReady.add(podKey(s));
  }

  /** Follows the selected pods' readiness until the returned function is called. */
  follow(onChange: PodChangeFeed): () => void {
    return onChange(({ pod, type }) => {
      const key = podKey(pod);
      if (!this.selected.has(key)) return;
      if (type === 'deleted' || isPodReady(pod)) this.notReady.delete(key);
      else this.notReady.add(key);
      this.wake();
    });
  }

  /** The budget question for `candidate` (the pod about to start), which is never counted twice. */
  request(candidate: string): StartRequest {
    return { unreadyNotInFlight: this.unreadyNotInFlight(candidate), inFlight: this.inFlight.size, budget: this.budget, concurrency: this.concurrency };
  }

  /** Not-Ready selected pods holding the budget against `candidate`. */
  holders(candidate: string): string[] {
    return [...this.notReady].filter((k) => !this.inFlight.has(k) && k !== candidate);
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  take(key: string): void {
    this.inFlight.add(key);
  }

  release(key: string): void {
    this.inFlight.delete(key);
    this.wake();
  }

  /** Leaves `keys` out of the count while a rollback reverts them; `[]` ends that. */
  exemptWhileRollingBack(keys: readonly string[]): void {
    this.exempt = new Set(keys);
  }

  /** Resolves on the next pod change, pod end or `wake()`. */
  nextChange(): Promise<void> {
    return new Promise((resolve) => this.wakeups.push(resolve));
  }

  wake(): void {
    this.onUnavailable?.(this.unreadyNotInFlight() + this.inFlight.size, this.budget);
    const w = this.wakeups;
    this.wakeups = [];
    for (const f of w) f();
  }

  private unreadyNotInFlight(candidate?: string): number {
    let n = 0;
    for (const k of this.notReady) if (!this.inFlight.has(k) && k !== candidate && !this.exempt.has(k)) n++;
    return n;
  }
}
