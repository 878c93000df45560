// The subscribers of a cache: added with an unsubscribe, told in the order they came. A listener
// that throws is a bug to be loud about, but it must not stop the cache or the listeners after it:
// its error is thrown again in a microtask, where the process's uncaught-exception handling sees
// it (an event emitter of client-node would swallow it).
export class Listeners<A extends unknown[]> {
  private readonly listeners = new Set<(...args: A) => void>();

  /** Adds `listener`; returns its unsubscribe. */
  add(listener: (...args: A) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  notify(...args: A): void {
    for (const l of this.listeners) {
      try {
        l(...args);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}
