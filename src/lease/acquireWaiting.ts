// Taking the lease when another runner may hold it: `--lease-wait`.
import { KwaveError } from '../errors.js';
import { realSleep } from '../sleep.js';
import type { RunLock } from './runLock.js';

export interface AcquireWait {
  /** How long to keep trying while another runner holds the lease; 0 refuses at once. */
  waitMs: number;
  /** Between attempts; default 2 s. */
  everyMs?: number;
  signal?: AbortSignal;
  /** Told once, when the first attempt finds the lease held. */
  onWait?: (message: string) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * `lock.acquire()`, retried while another runner holds the lease, for up to `waitMs`: a Job's
 * next pod, started after its predecessor died with the lease held, takes it over once it expires
 * instead of being refused as a second runner. Other failures are thrown at once.
 */
export async function acquireWaiting(lock: Pick<RunLock, 'acquire'>, wait: AcquireWait): Promise<void> {
  const now = wait.now ?? Date.now;
  const sleep = wait.sleep ?? realSleep;
  const deadline = now() + wait.waitMs;
  let told = false;
  for (;;) {
    try {
      return await lock.acquire();
    } catch (err) {
      const held = err instanceof KwaveError && err.code === 'LOCKED';
      if (!held || now() >= deadline || wait.signal?.aborted) throw err;
      if (!told)
        wait.onWait?.(
          `${err.message.split('. ')[0]}; waiting up to ${Math.round(wait.waitMs / 1000)}s for it (--lease-wait)`,
        );
      told = true;
      await sleep(Math.min(wait.everyMs ?? 2000, Math.max(0, deadline - now())));
    }
  }
}
