// The concurrency limit of a wave (and of pods whose node came back): p-limit, plus which pods
// queue for a slot. A start that holds a slot while it waits for the budget gives the slot way
// when the budget's holder queues for one of the same limiter (PodRunner.acquire): p-limit
// cannot hand a slot over, so the start ends with `gave-way` and queues again, at the back.
import pLimit from 'p-limit';

export const GAVE_WAY = 'gave-way';

export class SlotLimit {
  private readonly limit: ReturnType<typeof pLimit>;
  /** Pods queued for a slot. */
  private readonly queued = new Set<string>();

  /** `onQueued`: a pod queues (a start waiting for the budget it holds may have to give way). */
  constructor(
    concurrency: number,
    private readonly onQueued: () => void,
  ) {
    this.limit = pLimit(concurrency);
  }

  /** Runs `start` for `key` in a slot, and again, at the back of the queue, each time it gave way. */
  async run<T>(key: string, start: (queued: ReadonlySet<string>) => Promise<T | typeof GAVE_WAY>): Promise<T> {
    for (;;) {
      this.queued.add(key);
      this.onQueued();
      const end = await this.limit(() => {
        this.queued.delete(key);
        return start(this.queued);
      });
      if (end !== GAVE_WAY) return end as T;
    }
  }
}
