// Waiting, the one way every part of kwave does it: a `Sleep` is injected (deps.sleep), so tests
// and the simulator run on fake time, and `realSleep` is the real clock's. It always resolves, and
// says whether the time ran out (true) or `signal` fired first (false): callers that only wait
// (a back-off) ignore the answer; callers that must stop when signalled (a pause gate, the
// window wait) read it.

/** Waits `ms`; resolves false (early) when `signal` fires, true once the time is up. Never rejects. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<boolean>;

/** The real clock's sleep. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<boolean>((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
