// The concurrency limit of a wave (and of pods whose node came back), and which pods queue for a
// slot. A start that holds a slot while it waits for the budget gives the slot way when the
// budget's holder queues for one of the same limiter (PodRunner.acquire): a slot cannot be handed
// over, so the start ends with `gave-way` and queues again, at the back.
// A wave queues all its pods at once (20,000 at 50,000 pods), so a queued pod is held as data
// (its key and three callbacks) and gets a promise only once its slot comes: p-limit's promises
// and closures per queued pod came to ~1.5 KB each, 30 MB of a run's heap at that size.

export const GAVE_WAY = 'gave-way';

type Start<T> = (queued: ReadonlySet<string>) => Promise<T | typeof GAVE_WAY>;

interface Waiting {
  key: string;
  start: Start<unknown>;
  end: (result: unknown) => void;
  fail: (err: unknown) => void;
}

export class SlotLimit {
  private active = 0;
  /** Pods waiting for a slot, in order, from `head` on. */
  private waiting: (Waiting | undefined)[] = [];
  private head = 0;
  /** Pods queued for a slot. */
  private readonly queued = new Set<string>();

  /** `onQueued`: a pod queues (a start waiting for the budget it holds may have to give way). */
  constructor(
    private readonly concurrency: number,
    private readonly onQueued: () => void,
  ) {}

  /**
   * Runs `start` for `key` in a slot, in the order of the calls, and again, at the back of the
   * queue, each time it gave way; then `end` with its result, or `fail` with what it threw.
   */
  queue<T>(key: string, start: Start<T>, end: (result: T) => void, fail: (err: unknown) => void): void {
    this.enqueue({ key, start, end: end as (result: unknown) => void, fail });
  }

  /** `queue`, as a promise of the start's result. */
  run<T>(key: string, start: Start<T>): Promise<T> {
    return new Promise((resolve, reject) => this.queue(key, start, resolve, reject));
  }

  private enqueue(w: Waiting): void {
    this.queued.add(w.key);
    this.waiting.push(w);
    this.onQueued();
    // A start comes a turn after its call, never inside it: a wave queues many pods in one loop.
    if (this.active < this.concurrency) queueMicrotask(() => this.startNext());
  }

  private startNext(): void {
    while (this.active < this.concurrency && this.head < this.waiting.length) {
      const w = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined;
      if (this.head > 1024 && this.head * 2 > this.waiting.length) {
        this.waiting = this.waiting.slice(this.head);
        this.head = 0;
      }
      this.active++;
      this.queued.delete(w.key);
      let started: Promise<unknown>;
      try {
        started = w.start(this.queued);
      } catch (err) {
        started = Promise.reject(err);
      }
      started.then(
        (result) => {
          this.active--;
          if (result === GAVE_WAY) this.enqueue(w);
          else finish(w, result);
          this.startNext();
        },
        (err: unknown) => {
          this.active--;
          w.fail(err);
          this.startNext();
        },
      );
    }
  }
}

function finish(w: Waiting, result: unknown): void {
  try {
    w.end(result);
  } catch (err) {
    w.fail(err);
  }
}
