// A write only the lease's holder may make waits for the run lock to confirm the lease: at once
// while it is held; while it is in doubt (renewals unanswered), until a reclaim confirms it. It
// is not sent once the lease is lost: a runner that another may have replaced never writes over
// the new holder's work.
import { ExitCode, KwaveError } from '../errors.js';
import type { RunLock } from './runLock.js';

export type Holder = Pick<RunLock, 'confirmed' | 'lost'>;

/** Sends `write` once the lease is confirmed ours; throws KwaveError LEASE_LOST (exit 4) if it never is. */
export async function asHolder<T>(lock: Holder, write: () => Promise<T>): Promise<T> {
  if (!(await lock.confirmed())) {
    throw new KwaveError(
      'LEASE_LOST',
      `write not sent: ${lock.lost ?? 'the lease was released'}`,
      ExitCode.INTERRUPTED,
    );
  }
  return write();
}
