// A watch stream's liveness deadline: a connection that stops delivering without closing (a
// half-open connection, a proxy or NAT that lost it) would otherwise hold a watch silent until
// the server-side timeout plus a margin, minutes later.
//
// What a healthy server guarantees a silent watch: kube-apiserver sends a BOOKMARK (to watches
// that allow them) about once a minute, and one 2 s before the stream's `timeoutSeconds`, and
// ends the stream at that timeout (k8s.io/apiserver cacheWatcher.nextBookmarkTime). A minute is
// too long to wait, so the stream's timeout is kept below the deadline instead: a healthy stream
// delivers a byte or ends within its timeout of its last byte, whatever the bookmarks, and
// silence beyond the deadline means the connection is dead.

import type { Sleep } from '../sleep.js';

/** No event or bookmark for this long: the stream is dead (detected within a minute). */
export const DEFAULT_WATCH_LIVENESS_SECONDS = 45;

/**
 * The server-side timeout a stream asks for, when the caller sets none: a random 55–75% of the
 * liveness deadline (25–33 s of 45), so that a healthy server ends a silent stream well before
 * the deadline, and streams opened together do not all end together.
 */
export function defaultWatchTimeoutSeconds(livenessSeconds: number, random: () => number): number {
  const low = Math.max(1, Math.round(livenessSeconds * 0.55));
  const high = Math.max(low, Math.floor(livenessSeconds * 0.75));
  return low + Math.floor(random() * (high - low + 1));
}

/**
 * How long a stream may be silent: the liveness deadline, but never less than a third beyond
 * the stream's own timeout (a caller's long timeout), by which a healthy server has ended it.
 */
export function silenceLimitMs(livenessSeconds: number, timeoutSeconds: number): number {
  return Math.max(livenessSeconds, Math.ceil((timeoutSeconds * 4) / 3)) * 1000;
}

export interface LivenessDeadline {
  /** Something arrived on the stream. */
  touch(): void;
}

/**
 * Calls `onSilent` (once) when `touch` was not called for `limitMs`, unless `signal` fires first.
 * Lazy: one sleep per deadline, however many events come (touch only records the time).
 */
export function livenessDeadline(
  limitMs: number,
  deps: { sleep: Sleep; now: () => number },
  signal: AbortSignal,
  onSilent: (silentMs: number) => void,
): LivenessDeadline {
  let last = deps.now();
  void (async () => {
    let wait = limitMs;
    for (;;) {
      const before = deps.now();
      if (!(await deps.sleep(wait, signal)) || signal.aborted) return;
      const now = deps.now();
      const silent = now - last;
      if (silent >= limitMs) return onSilent(silent);
      // A clock that did not move while the sleep ran out (a test's fake time) cannot measure the
      // deadline: stop rather than spin.
      if (now === before) return;
      wait = limitMs - silent;
    }
  })();
  return {
    touch: () => {
      last = deps.now();
    },
  };
}
