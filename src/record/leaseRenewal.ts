// When the run lock renews its lease, retries a failed renewal, and gives the lease up. Pure.
//
// The lease is ours until the renewTime we last wrote plus its duration, and another runner
// takes over no sooner than a duration (plus 1 s) after it last saw the lease change. So the
// holder must stop before that, whatever its requests do: it gives up at a renew deadline inside
// the duration, as client-go's leader election does. Worked example, duration 15 s: renewed at
// 0 s; the next renewal goes out at 3 s and may take until 12 s to be answered; if it fails it is
// repeated every 2 s (5, 7, … s); if none succeeded by 12 s the lease is given up — 4 s before
// anyone else could take it. (client-go gives up at 10 s of 15; kwave renews earlier and waits
// longer for an answer because its API server may be a loaded simulator on a shared machine: an
// answer 5 s late must not stop a run, one 9 s late need not.)
//
// Times are the moments renewals were *sent*: the renewTime a renewal writes is its send time, so
// the lease's expiry is counted from there, however late the answer came.

export interface RenewalPolicy {
  /** Renew when the last successful renewal was sent this long ago. */
  renewEveryMs: number;
  /** After a failed attempt, wait this long before the next. */
  retryEveryMs: number;
  /** Give the lease up once no renewal sent within this long succeeded. */
  renewDeadlineMs: number;
  /** How often the lock looks at the clock; the deadline is noticed at most this late. */
  tickMs: number;
}

/** The schedule for a lease of `durationSeconds`: renew every fifth, retry every 7.5th, give up at four fifths, look every 15th. */
export function renewalPolicy(durationSeconds: number): RenewalPolicy {
  const ms = durationSeconds * 1000;
  return { renewEveryMs: ms / 5, retryEveryMs: ms / 7.5, renewDeadlineMs: (ms * 4) / 5, tickMs: ms / 15 };
}

export interface RenewalState {
  nowMs: number;
  /** When the last successful renewal (or the acquisition) was sent. */
  renewedAtMs: number;
  /** A renewal is under way. */
  inFlight: boolean;
  /** When the last attempt failed, if it did and none succeeded since. */
  failedAtMs?: number;
}

export type RenewalStep = 'wait' | 'renew' | 'give-up';

/** What to do now. A renewal in flight is never doubled: its own time limit is the renew deadline. */
export function renewalStep(state: RenewalState, policy: RenewalPolicy): RenewalStep {
  const since = state.nowMs - state.renewedAtMs;
  if (since >= policy.renewDeadlineMs) return 'give-up';
  if (state.inFlight || since < policy.renewEveryMs) return 'wait';
  if (state.failedAtMs !== undefined && state.nowMs - state.failedAtMs < policy.retryEveryMs) return 'wait';
  return 'renew';
}

/** How long a renewal sent now may take: until the renew deadline (at least 1 ms). */
export function renewalTimeLimit(state: Pick<RenewalState, 'nowMs' | 'renewedAtMs'>, policy: RenewalPolicy): number {
  return Math.max(1, policy.renewDeadlineMs - (state.nowMs - state.renewedAtMs));
}
