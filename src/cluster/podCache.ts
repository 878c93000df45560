// A watch-backed copy of the selected pods: list, then watch from the list's resourceVersion;
// when a stream ends or breaks, watch again from the last version seen (bookmarks included);
// when that version has expired (410), list again. Waiting for a pod is driven by these events
// (plus one timer for the timeout): nothing here polls.
//
// The cache may lag behind a write kwave has just made. Objects returned by kwave's own requests
// are fed in (`observe`, wired to Cluster.onPodObserved) when they are newer than what the cache
// holds, so the next decision sees kwave's own write even before the watch delivers it.
import type { V1Pod } from '@kubernetes/client-node';
import type { Cluster, PodWatchEvent, WatchHandle } from './cluster.js';
import { KubeError, toKubeError } from './kubeError.js';
import { isKnownNewer, isKnownOlder } from './resourceVersion.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, realSleep, type RetryPolicy, type Sleep } from './retry.js';

/** What the cache needs of a Cluster. */
export type PodSource = Pick<Cluster, 'listPods' | 'watchPods' | 'getPod' | 'onPodObserved'>;

export interface PodCacheDeps {
  sleep: Sleep;
  random: () => number;
  now: () => number;
  /**
   * Calls `fn` after `ms` unless cancelled. Default: setTimeout, when `sleep` is the real one;
   * with an injected `sleep` (fake time in tests), a timer built on it.
   */
  timer: (ms: number, fn: () => void) => () => void;
}

/** Why a wait's timer is cancelled: given to abort(), so no DOMException is built per wait. */
const SETTLED = Object.freeze(new Error('settled'));

const realTimer = (ms: number, fn: () => void) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

/** A cancellable timer on top of an injected sleep (a controller per timer: fine for tests). */
function timerOnSleep(sleep: Sleep): PodCacheDeps['timer'] {
  return (ms, fn) => {
    const cancel = new AbortController();
    void sleep(ms, cancel.signal).then(() => {
      if (!cancel.signal.aborted) fn();
    });
    return () => cancel.abort(SETTLED);
  };
}

export interface PodCacheOptions {
  namespaces: string[];
  /** API label selector string (see renderSelector in src/rollout/labelSelector.ts); empty = every pod. */
  labelSelector?: string;
  deps?: Partial<PodCacheDeps>;
  /** Server-side watch timeout; default a random 300–600 s per stream, as client-go's reflector does. */
  watchTimeoutSeconds?: number;
  /** A stream that ends sooner than this without any event counts as a failure (back-off grows). Default 1000. */
  minWatchMs?: number;
  /** Back-off between failed list/watch attempts. */
  backoff?: Pick<RetryPolicy, 'baseMs' | 'factor' | 'capMs'>;
}

export type PodChangeType = 'added' | 'modified' | 'deleted';

export interface PodChange {
  type: PodChangeType;
  /** The pod now (for 'deleted': its last known state). */
  pod: V1Pod;
  previous?: V1Pod;
  /** Where the news came from: the initial or a re-list, the watch, or kwave's own request. */
  source: 'list' | 'watch' | 'write';
}

export type WaitResult = V1Pod | 'vanished' | 'timeout' | 'aborted';

export interface WaitOptions {
  /** The uid the caller is working on: a pod with the same name but another uid is a replacement → 'vanished'. */
  uid?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Counters for tests and diagnostics. */
export interface PodCacheStats {
  lists: number;
  watches: number;
  /** Relists forced by an expired resourceVersion (410). */
  expired: number;
}

interface NamespaceState {
  rv?: string;
  synced: boolean;
  resolve: () => void;
  reject: (err: KubeError) => void;
}

interface Waiter {
  check: () => void;
  abort: () => void;
}

interface WatchOutcome {
  error?: KubeError;
  expired: boolean;
  productive: boolean;
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;


export class PodCache {
  /** Resolves once every namespace has been listed; rejects if a first list fails for good (e.g. 403). */
  readonly synced: Promise<void>;
  readonly stats: PodCacheStats = { lists: 0, watches: 0, expired: 0 };
  private readonly pods = new Map<string, V1Pod>();
  private readonly namespaces = new Map<string, NamespaceState>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** Waits by the caller's signal: one abort listener per signal, however many pods wait on it. */
  private readonly waitersBySignal = new Map<AbortSignal, { waiting: Set<Waiter>; listener: () => void }>();
  private readonly changeListeners = new Set<(change: PodChange) => void>();
  private readonly errorListeners = new Set<(err: KubeError, namespace: string) => void>();
  private readonly closing = new AbortController();
  private readonly deps: PodCacheDeps;
  private readonly backoff: Pick<RetryPolicy, 'baseMs' | 'factor' | 'capMs'>;
  private readonly minWatchMs: number;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly source: PodSource,
    private readonly options: PodCacheOptions,
  ) {
    if (options.namespaces.length === 0) throw new Error('PodCache: at least one namespace is required');
    const sleep = options.deps?.sleep ?? realSleep;
    const timer = options.deps?.timer ?? (sleep === realSleep ? realTimer : timerOnSleep(sleep));
    this.deps = { random: Math.random, now: () => Date.now(), ...options.deps, sleep, timer };
    this.backoff = options.backoff ?? DEFAULT_RETRY_POLICY;
    this.minWatchMs = options.minWatchMs ?? 1000;
    const syncs: Promise<void>[] = [];
    for (const ns of new Set(options.namespaces)) {
      let resolve!: () => void;
      let reject!: (err: KubeError) => void;
      syncs.push(new Promise<void>((res, rej) => ((resolve = res), (reject = rej))));
      this.namespaces.set(ns, { synced: false, resolve, reject });
    }
    this.synced = Promise.all(syncs).then(() => undefined);
    // Callers who never await `synced` must not crash the process with an unhandled rejection.
    this.synced.catch(() => undefined);
    this.unsubscribe = source.onPodObserved((pod) => this.observe(pod));
    for (const ns of this.namespaces.keys()) void this.run(ns);
  }

  get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /** The cached pod, or undefined. */
  get(namespace: string, name: string): V1Pod | undefined {
    return this.pods.get(keyOf(namespace, name));
  }

  /** Cached pods (of one namespace, or all), ordered by namespace then name. */
  list(namespace?: string): V1Pod[] {
    const out = [...this.pods.entries()]
      .filter(([, p]) => namespace === undefined || p.metadata?.namespace === namespace)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return out.map(([, p]) => p);
  }

  /** The resourceVersion each namespace's watch would resume from. */
  resourceVersions(): Record<string, string | undefined> {
    return Object.fromEntries([...this.namespaces].map(([ns, s]) => [ns, s.rv]));
  }

  /** Calls `listener` after every change to the cache. Listeners must not throw. Returns the unsubscribe. */
  onChange(listener: (change: PodChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => {
      this.changeListeners.delete(listener);
    };
  }

  /** Calls `listener` when a list or watch fails (the cache retries by itself). Returns the unsubscribe. */
  onError(listener: (err: KubeError, namespace: string) => void): () => void {
    this.errorListeners.add(listener);
    return () => {
      this.errorListeners.delete(listener);
    };
  }

  /**
   * Takes in a pod returned by one of kwave's own requests if it is known to be newer than the
   * cached one (resourceVersions compared as integers; if they cannot be compared the watch is
   * trusted and the object is ignored). Only pods the cache already holds are taken. Returns
   * whether the cache changed.
   */
  observe(pod: V1Pod): boolean {
    const ns = pod.metadata?.namespace;
    const name = pod.metadata?.name;
    if (!ns || !name || this.closed) return false;
    const current = this.pods.get(keyOf(ns, name));
    if (!current || !isKnownNewer(pod.metadata?.resourceVersion, current.metadata?.resourceVersion)) return false;
    return this.upsert(ns, pod, 'write');
  }

  /**
   * A fresh read (GET, not the cache) for decisions that must not rest on a stale copy; the
   * result also refreshes the cache. Undefined when the pod does not exist.
   *
   * kwave uses it after a 409: its writes carry the resourceVersion they were decided on, so a
   * write decided on a stale copy is refused, and the next decision rests on this fresh read.
   */
  async getFresh(namespace: string, name: string): Promise<V1Pod | undefined> {
    try {
      return await this.source.getPod(namespace, name);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /**
   * Waits until `predicate` holds for the cached pod, driven by watch events (and kwave's own
   * writes), and resolves with that pod. Resolves 'vanished' when the pod is deleted or replaced
   * (uid differs from `uid`), 'timeout' after `timeoutMs`, 'aborted' when `signal` aborts or the
   * cache closes. The predicate is checked at once, then on every change of that pod. Rejects
   * only if the cache never synced or the predicate throws.
   */
  async waitFor(namespace: string, name: string, predicate: (pod: V1Pod) => boolean, options: WaitOptions): Promise<WaitResult> {
    await this.synced;
    if (this.closed || options.signal?.aborted) return 'aborted';
    const key = keyOf(namespace, name);
    return new Promise<WaitResult>((resolve, reject) => {
      let cancelTimer = () => {};
      let done = false;
      const finish = () => {
        done = true;
        cancelTimer();
        if (options.signal) this.unwatchSignal(options.signal, waiter);
        const set = this.waiters.get(key);
        set?.delete(waiter);
        if (set?.size === 0) this.waiters.delete(key);
      };
      const settle = (result: WaitResult) => {
        if (done) return;
        finish();
        resolve(result);
      };
      const check = () => {
        if (done) return;
        const pod = this.pods.get(key);
        if (!pod || (options.uid !== undefined && pod.metadata?.uid !== options.uid)) return settle('vanished');
        let ok: boolean;
        try {
          ok = predicate(pod);
        } catch (err) {
          finish();
          reject(err);
          return;
        }
        if (ok) settle(pod);
      };
      const onAbort = () => settle('aborted');
      const waiter: Waiter = { check, abort: onAbort };
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      set.add(waiter);
      if (options.signal) this.watchSignal(options.signal, waiter);
      cancelTimer = this.deps.timer(options.timeoutMs, () => settle('timeout'));
      check();
    });
  }

  private watchSignal(signal: AbortSignal, waiter: Waiter): void {
    let entry = this.waitersBySignal.get(signal);
    if (!entry) {
      const waiting = new Set<Waiter>();
      const listener = () => {
        this.waitersBySignal.delete(signal);
        for (const w of [...waiting]) w.abort();
      };
      entry = { waiting, listener };
      this.waitersBySignal.set(signal, entry);
      signal.addEventListener('abort', listener, { once: true });
    }
    entry.waiting.add(waiter);
  }

  private unwatchSignal(signal: AbortSignal, waiter: Waiter): void {
    const entry = this.waitersBySignal.get(signal);
    if (!entry) return;
    entry.waiting.delete(waiter);
    if (entry.waiting.size === 0) {
      signal.removeEventListener('abort', entry.listener);
      this.waitersBySignal.delete(signal);
    }
  }

  /** Stops every watch and retry; pending waits resolve 'aborted'. */
  close(): void {
    if (this.closed) return;
    this.closing.abort();
    this.unsubscribe();
    for (const set of [...this.waiters.values()]) for (const w of [...set]) w.abort();
    for (const [ns, state] of this.namespaces) {
      if (!state.synced) state.reject(new KubeError(0, 'Closed', `pod cache closed before namespace ${ns} was listed`));
    }
  }

  // ---- the list+watch loop, one per namespace -------------------------------------------------

  private async run(ns: string): Promise<void> {
    const state = this.namespaces.get(ns)!;
    let failures = 0;
    while (!this.closed) {
      if (state.rv === undefined) {
        try {
          const list = await this.source.listPods(ns, { labelSelector: this.options.labelSelector });
          if (this.closed) return;
          this.stats.lists++;
          this.replaceNamespace(ns, list.items);
          state.rv = list.resourceVersion;
          if (!state.synced) {
            state.synced = true;
            state.resolve();
          }
        } catch (thrown) {
          if (this.closed) return;
          const err = toKubeError(thrown);
          this.emitError(err, ns);
          // The first list already went through the request retries: give up and say why.
          if (!state.synced) return state.reject(err);
          failures++;
          await this.deps.sleep(backoffDelay(failures, this.backoff, this.deps.random), this.closing.signal);
          continue;
        }
      }
      const outcome = await this.watchOnce(ns, state);
      if (this.closed) return;
      if (outcome.error && !outcome.expired) this.emitError(outcome.error, ns);
      if (outcome.expired) {
        this.stats.expired++;
        state.rv = undefined;
      }
      failures = outcome.productive ? 0 : failures + 1;
      if (failures > 0) await this.deps.sleep(backoffDelay(failures, this.backoff, this.deps.random), this.closing.signal);
    }
  }

  /** One watch stream, from `state.rv`, until it ends; `state.rv` follows every event. */
  private watchOnce(ns: string, state: NamespaceState): Promise<WatchOutcome> {
    return new Promise<WatchOutcome>((resolve) => {
      const started = this.deps.now();
      const timeoutSeconds = this.options.watchTimeoutSeconds ?? 300 + Math.floor(this.deps.random() * 300);
      const watchdog = new AbortController();
      let events = 0;
      let eventError: KubeError | undefined;
      let finished = false;
      let handle: WatchHandle | undefined;
      const finish = (doneError?: KubeError) => {
        if (finished) return;
        finished = true;
        watchdog.abort();
        this.closing.signal.removeEventListener('abort', onClose);
        handle?.abort();
        const error = eventError ?? doneError;
        const expired = error?.code === 410;
        // The server answered the watch request itself with an HTTP error (429, 5xx…): a failure.
        const refused = doneError !== undefined && doneError.code !== 0 && events === 0 && !eventError;
        const productive = !refused && !expired && (events > 0 || this.deps.now() - started >= this.minWatchMs);
        resolve({ error: this.closed ? undefined : error, expired, productive });
      };
      const onClose = () => finish();
      this.closing.signal.addEventListener('abort', onClose, { once: true });
      // A half-open connection would otherwise hang forever: the server ends the stream after
      // timeoutSeconds, so silence well beyond that means the connection is dead.
      void this.deps.sleep(timeoutSeconds * 1000 + 30_000, watchdog.signal).then(() => {
        if (!finished) finish(new KubeError(0, 'Timeout', `watch of pods in ${ns} outlived its ${timeoutSeconds}s timeout`));
      });
      this.stats.watches++;
      void this.source
        .watchPods(
          ns,
          { labelSelector: this.options.labelSelector, resourceVersion: state.rv, timeoutSeconds, allowWatchBookmarks: true },
          (event) => {
            if (finished) return;
            if (event.type === 'ERROR') {
              eventError = event.error;
              finish();
              return;
            }
            events++;
            this.applyWatchEvent(ns, event, state);
          },
          (err) => finish(err),
        )
        .then((h) => {
          handle = h;
          if (finished) h.abort();
        });
    });
  }

  private applyWatchEvent(ns: string, event: Exclude<PodWatchEvent, { type: 'ERROR' }>, state: NamespaceState): void {
    if (event.type === 'BOOKMARK') {
      state.rv = event.resourceVersion;
      return;
    }
    const pod = event.pod;
    const rv = pod.metadata?.resourceVersion;
    if (event.type === 'DELETED') this.remove(ns, pod, 'watch');
    else this.upsert(ns, pod, 'watch');
    if (rv) state.rv = rv;
  }

  // ---- cache mutations (each notifies listeners and the waiters of that pod) ------------------

  /** Stores `pod` unless the cached one is known to be newer (or is the same version). */
  private upsert(ns: string, pod: V1Pod, source: PodChange['source']): boolean {
    const name = pod.metadata?.name;
    if (!name) return false;
    const key = keyOf(ns, name);
    const previous = this.pods.get(key);
    const rv = pod.metadata?.resourceVersion;
    if (previous) {
      const prevRv = previous.metadata?.resourceVersion;
      if (isKnownOlder(rv, prevRv) || (rv !== undefined && rv === prevRv)) return false;
    }
    this.pods.set(key, pod);
    this.notify(key, { type: previous ? 'modified' : 'added', pod, previous, source });
    return true;
  }

  private remove(ns: string, pod: V1Pod, source: PodChange['source']): void {
    const name = pod.metadata?.name;
    if (!name) return;
    const key = keyOf(ns, name);
    const previous = this.pods.get(key);
    if (!previous) return;
    // A deletion older than what we hold belongs to an earlier incarnation of the name.
    if (isKnownOlder(pod.metadata?.resourceVersion, previous.metadata?.resourceVersion)) return;
    this.pods.delete(key);
    this.notify(key, { type: 'deleted', pod, previous, source });
  }

  /** After a (re)list: drop pods the list no longer has, take in the listed ones. */
  private replaceNamespace(ns: string, items: V1Pod[]): void {
    const listed = new Set(items.map((p) => p.metadata?.name));
    for (const pod of this.list(ns)) {
      if (!listed.has(pod.metadata?.name)) {
        this.pods.delete(keyOf(ns, pod.metadata!.name!));
        this.notify(keyOf(ns, pod.metadata!.name!), { type: 'deleted', pod, previous: pod, source: 'list' });
      }
    }
    for (const pod of items) this.upsert(ns, pod, 'list');
  }

  private notify(key: string, change: PodChange): void {
    for (const l of this.changeListeners) {
      try {
        l(change);
      } catch (err) {
        // A listener bug must be loud, but must not stop the cache (client-node would swallow it).
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    const set = this.waiters.get(key);
    if (set) for (const w of [...set]) w.check();
  }

  private emitError(err: KubeError, ns: string): void {
    for (const l of this.errorListeners) l(err, ns);
  }
}
