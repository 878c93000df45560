// The pods a run has yet to take, in rollout order, shared by its waves: a wave takes the next pod
// whose node can act, passing over (not dropping) pods whose node cannot, which keep their place
// for a later take. Passed-over pods are kept by node, so a take asks each such node once, not each
// of its pods: a fleet with a third of its 50,000 pods on a dead node stays linear.

/** A pod's place in the order and its node (undefined: unknown, always able to act). */
interface Queued<T> {
  pod: T;
  place: number;
}

export class PodQueue<T> {
  private next = 0;
  /** Passed-over pods by node, each list in order. */
  private readonly passedOver = new Map<string, Queued<T>[]>();
  private passedOverCount = 0;

  constructor(
    private readonly pods: readonly T[],
    private readonly nodeOf: (p: T) => string | undefined,
  ) {}

  /** Pods not taken yet. */
  get size(): number {
    return this.pods.length - this.next + this.passedOverCount;
  }

  /**
   * The first pod in order whose node can act (`canAct`), taken out of the queue; when every pod
   * left waits for its node, the first of those (the run parks it); undefined when none is left.
   */
  take(canAct: (node: string) => boolean): T | undefined {
    const back = this.firstPassedOverBack(canAct);
    while (this.next < this.pods.length && (back === undefined || this.next < back.place)) {
      const place = this.next++;
      const pod = this.pods[place]!;
      const node = this.nodeOf(pod);
      if (node === undefined || canAct(node)) return pod;
      const list = this.passedOver.get(node) ?? [];
      if (list.length === 0) this.passedOver.set(node, list);
      list.push({ pod, place });
      this.passedOverCount++;
    }
    if (back) return this.shift(back.node);
    return this.firstPassedOver();
  }

  /** Takes the pods at the front of the order while `pick` holds, whatever their node (pods an earlier run left mid-flow). */
  takeFrontWhile(pick: (p: T) => boolean): T[] {
    const out: T[] = [];
    if (this.passedOverCount > 0) return out;
    while (this.next < this.pods.length && pick(this.pods[this.next]!)) out.push(this.pods[this.next++]!);
    return out;
  }

  /** The first `n` pods a take would give now, not taken. */
  peek(n: number, canAct: (node: string) => boolean): T[] {
    const passed = [...this.passedOver].filter(([node]) => canAct(node)).flatMap(([, l]) => l);
    for (let i = this.next, fresh = 0; i < this.pods.length && fresh < n; i++) {
      const node = this.nodeOf(this.pods[i]!);
      if (node !== undefined && !canAct(node)) continue;
      passed.push({ pod: this.pods[i]!, place: i });
      fresh++;
    }
    return passed
      .sort((a, b) => a.place - b.place)
      .slice(0, n)
      .map((q) => q.pod);
  }

  /** The earliest passed-over pod whose node can act again. */
  private firstPassedOverBack(canAct: (node: string) => boolean): { node: string; place: number } | undefined {
    let best: { node: string; place: number } | undefined;
    for (const [node, list] of this.passedOver) {
      const head = list[0];
      if (head && (!best || head.place < best.place) && canAct(node)) best = { node, place: head.place };
    }
    return best;
  }

  private firstPassedOver(): T | undefined {
    let best: string | undefined;
    let place = Infinity;
    for (const [node, list] of this.passedOver)
      if (list[0] && list[0].place < place) [best, place] = [node, list[0].place];
    return best === undefined ? undefined : this.shift(best);
  }

  private shift(node: string): T {
    const list = this.passedOver.get(node)!;
    const q = list.shift()!;
    if (list.length === 0) this.passedOver.delete(node);
    this.passedOverCount--;
    return q.pod;
  }
}
