// The live side of the unavailability budget: which selected pods are not Ready now (from the
// pod cache's change feed) and which are in flight, and a wake-up for everyone waiting on either.
// The rule itself (may one more start?) is budget.ts; this only keeps its inputs current.
import type { V1Pod } from '@kubernetes/client-node';
import { conditionStatus, isPodReady, podKey, type PodName } from '../inplace/podView.js';
import { startBlocker, type StartRequest } from './budget.js';

export type PodChangeFeed = (
  listener: (change: { pod: V1Pod; type: 'added' | 'modified' | 'deleted' }) => void,
) => () => void;

export class BudgetTracker {
  private readonly inFlight = new Set<string>();
  /** Selected pods not Ready now. */
  private readonly notReady = new Set<string>();
  private readonly selected: ReadonlySet<string>;
  /** Pods a rollback is about to revert: drained failures whose revert frees, not takes, budget. */
  private exempt: ReadonlySet<string> = new Set();
  private wakeups: (() => void)[] = [];
  /** Since when (ms) each selected pod is not Ready, and the length of its last not-Ready spell. */
  private readonly notReadySince = new Map<string, number>();
  private readonly lastUnready = new Map<string, number>();
  /**
   * |notReady − inFlight − exempt|, kept up to date by every change of the three sets, so that the
   * budget question costs O(1) per pod event instead of a scan of every not-Ready pod.
   */
  private held = 0;

  constructor(
    selected: readonly (PodName & { pod: V1Pod })[],
    readonly budget: number,
    private readonly concurrency: number,
    /** Told the not-Ready count (in-flight pods included) whenever it may have changed. */
    private readonly onUnavailable?: (unavailable: number, budget: number) => void,
    private readonly now: () => number = Date.now,
    /**
     * The plan's gate condition: a pod whose gate is closed counts as not Ready even while its
     * Ready still says True. Its kubelet turns it not Ready once it sees the gate — unless it is
     * cut off (its node gone silent or deleted as the gate closed), and then the pod, no longer in
     * flight once its flow waits apart for the node, would hold nothing while it is drained.
     */
    private readonly gateType?: string,
  ) {
    this.selected = new Set(selected.map(podKey));
    for (const s of selected) if (this.unavailable(s.pod)) this.setNotReady(podKey(s), true);
  }

  private unavailable(pod: V1Pod): boolean {
    return !isPodReady(pod) || (this.gateType !== undefined && conditionStatus(pod, this.gateType) === 'False');
  }

  /** Follows the selected pods' readiness until the returned function is called. */
  follow(onChange: PodChangeFeed): () => void {
    return onChange(({ pod, type }) => {
      const key = podKey(pod);
      if (!this.selected.has(key)) return;
      this.setNotReady(key, type !== 'deleted' && this.unavailable(pod));
      this.wake();
    });
  }

  /** The budget question for `candidate` (the pod about to start), which is never counted twice. */
  request(candidate: string): StartRequest {
    return {
      unreadyNotInFlight: this.unreadyNotInFlight(candidate),
      inFlight: this.inFlight.size,
      budget: this.budget,
      concurrency: this.concurrency,
      candidateUnready: this.notReady.has(candidate),
    };
  }

  /**
   * Whether `key`, in flight and Ready, may be drained now: the start rule asked again at the
   * drain itself, since a pod started while not Ready took no budget and may be Ready again.
   */
  mayDrain(key: string): boolean {
    // The start rule with `key` not yet counted in flight; it holds its slot already.
    const asStart = { unreadyNotInFlight: this.held, inFlight: this.inFlight.size - 1, budget: this.budget };
    return this.inFlight.has(key) && startBlocker({ ...asStart, concurrency: Infinity }) === undefined;
  }

  /** Not-Ready selected pods holding the budget against `candidate`. */
  holders(candidate: string): string[] {
    return [...this.notReady].filter((k) => !this.inFlight.has(k) && k !== candidate);
  }

  /** How long `key` was last not Ready (ms), once it is Ready again; read once. */
  unreadyMs(key: string): number | undefined {
    const ms = this.lastUnready.get(key);
    this.lastUnready.delete(key);
    return ms;
  }

  /** The pods in flight (`namespace/name`). */
  get inFlightKeys(): ReadonlySet<string> {
    return this.inFlight;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  take(key: string): void {
    if (this.inFlight.has(key)) return;
    if (this.counts(key)) this.held--;
    this.inFlight.add(key);
  }

  release(key: string): void {
    if (this.inFlight.delete(key) && this.counts(key)) this.held++;
    this.wake();
  }

  /** Leaves `keys` out of the count while a rollback reverts them; `[]` ends that. */
  exemptWhileRollingBack(keys: readonly string[]): void {
    this.exempt = new Set(keys);
    // Rare (once per rollback): count afresh.
    this.held = 0;
    for (const k of this.notReady) if (this.counts(k)) this.held++;
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
    return candidate !== undefined && this.counts(candidate) ? this.held - 1 : this.held;
  }

  /** Whether a pod holds the budget on its own: not Ready, not in flight, not exempt. */
  private counts(key: string): boolean {
    return this.notReady.has(key) && !this.inFlight.has(key) && !this.exempt.has(key);
  }

  private setNotReady(key: string, notReady: boolean): void {
    if (notReady === this.notReady.has(key)) return;
    const free = !this.inFlight.has(key) && !this.exempt.has(key);
    if (notReady) {
      this.notReady.add(key);
      this.notReadySince.set(key, this.now());
    } else {
      this.notReady.delete(key);
      const since = this.notReadySince.get(key);
      this.notReadySince.delete(key);
      if (since !== undefined) this.lastUnready.set(key, this.now() - since);
    }
    if (free) this.held += notReady ? 1 : -1;
  }
}
