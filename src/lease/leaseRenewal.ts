// When the run lock renews its lease, retries a failed renewal, stops counting the lease as its
// own, and tries to confirm it again. Pure.
//
// The lease is ours until the renewTime we last wrote plus its duration, and another runner
// takes over no sooner than a duration (plus 1 s) after it last saw the lease change. So the
// holder must stop writing before that, whatever its requests do: at a renew deadline inside the
// duration the lease is *in doubt* (client-go's leader election gives it up there). Worked
// example, duration 15 s: renewed at 0 s; the next renewal goes out at 3 s and may take until
// 12 s to be answered; if it fails it is repeated every 2 s (5, 7, … s); if none succeeded by
// 12 s the lease is in doubt — 4 s before anyone else could take it — and pod and record writes
// wait. (client-go gives up at 10 s of 15; kwave renews earlier and waits longer for an answer
// because its API server may be a loaded simulator on a shared machine.)
//
// In doubt is not lost: while the API server does not answer (a restart takes ~14 s) nobody can
// take the lease over either. So the lock keeps trying, every retry period, to *reclaim* it: read
// it, and if it still names us, renew it with an update guarded by that read's resourceVersion.
// Only a lease that names someone else (or none: it was released by whoever took it) is lost.
//
// Times are the moments renewals were *sent*: the renewTime a renewal writes is its send time, so
// the lease's expiry is counted from there, however late the answer came.

export interface RenewalPolicy {
  /** Renew when the last successful renewal was sent this long ago. */
  renewEveryMs: number;
  /** After a failed attempt, wait this long before the next. */
  retryEveryMs: number;
  /** Hold writes back (the lease is in doubt) once no renewal sent within this long succeeded. */
  renewDeadlineMs: number;
  /** How often the lock looks at the clock; the deadline is noticed at most this late. */
  tickMs: number;
}

/** The schedule for a lease of `durationSeconds`: renew every fifth, retry every 7.5th, in doubt at four fifths, look every 15th. */
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
  /** The renew deadline passed: the lease is in doubt until a reclaim succeeds. */
  inDoubt?: boolean;
}

/** `doubt`: the renew deadline has passed, hold writes back; `reclaim`: in doubt, try to confirm the lease is still ours. */
export type RenewalStep = 'wait' | 'renew' | 'doubt' | 'reclaim';

/** What to do now. An attempt in flight is never doubled: its own time limit is the renew deadline. */
export function renewalStep(state: RenewalState, policy: RenewalPolicy): RenewalStep {
  const retryLater = state.failedAtMs !== undefined && state.nowMs - state.failedAtMs < policy.retryEveryMs;
  if (state.inDoubt) return state.inFlight || retryLater ? 'wait' : 'reclaim';
  const since = state.nowMs - state.renewedAtMs;
  if (since >= policy.renewDeadlineMs) return 'doubt';
  if (state.inFlight || since < policy.renewEveryMs || retryLater) return 'wait';
  return 'renew';
}

/** How long a renewal sent now may take: until the renew deadline (at least 1 ms). */
export function renewalTimeLimit(state: Pick<RenewalState, 'nowMs' | 'renewedAtMs'>, policy: RenewalPolicy): number {
  return Math.max(1, policy.renewDeadlineMs - (state.nowMs - state.renewedAtMs));
}
