// A watch-backed copy of the selected pods: one resumable list+watch per namespace
// (listWatch.ts). Waiting for a pod is driven by its events (plus one timer for the timeout):
// nothing here polls.
//
// The cache may lag behind a write kwave has just made. Objects returned by kwave's own requests
// are fed in (`observe`, wired to Cluster.onPodObserved) when they are newer than what the cache
// holds, so the next decision sees kwave's own write even before the watch delivers it. When the
// watch then delivers that same version, it is not parsed again (`known` of the watch query).
import type { V1Pod } from '@kubernetes/client-node';
import type { Cluster } from './cluster.js';
import { KubeError } from './kubeError.js';
import { Listeners } from './listeners.js';
import { loopTuning, ResumableListWatch, type ListWatchStats, type ListWatchTuning } from './listWatch.js';
import { isKnownNewer, isKnownOlder } from './resourceVersion.js';
import { shareUnchanged } from './shareUnchanged.js';
import { realSleep, type Sleep } from '../sleep.js';

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

export interface PodCacheOptions extends ListWatchTuning {
  namespaces: string[];
  /** API label selector string (see renderSelector in src/rollout/labelSelector.ts); empty = every pod. */
  labelSelector?: string;
  deps?: Partial<PodCacheDeps>;
}

type PodChangeType = 'added' | 'modified' | 'deleted';

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

/** Counters for tests and diagnostics, summed over the namespaces. */
export type PodCacheStats = ListWatchStats;

interface Waiter {
  check: () => void;
  abort: () => void;
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

/**
 * How many versions taken in from kwave's own writes are remembered for the watch to pass over:
 * each is forgotten when its event arrives; the bound only matters when events never do (a
 * stream cut, then a relist), and it is far above the writes in flight at once.
 */
const KNOWN_VERSIONS = 4096;

export class PodCache {
  /** Resolves once every namespace has been listed; rejects if a first list fails for good (e.g. 403). */
  readonly synced: Promise<void>;
  readonly stats: PodCacheStats = { lists: 0, watches: 0, expired: 0 };
  private readonly pods = new Map<string, V1Pod>();
  /** Versions taken in from kwave's own writes whose watch events have not come yet (oldest first). */
  private readonly written = new Set<string>();
  private readonly namespaces = new Map<string, ResumableListWatch<V1Pod>>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  /**
   * Waits by the caller's signal: one abort listener per signal, however many waits it has seen
   * or holds, added at its first wait and left in place (a flow's signal, one a pod, sees a wait
   * at every change of its pod; adding and removing the listener each time cost ~5 % of a run's CPU).
   * Weak: a signal no one else holds goes with its entry.
   */
  private readonly waitersBySignal = new WeakMap<AbortSignal, Set<Waiter>>();
  /** Whether `synced` has resolved: a wait then starts at once. */
  private isSynced = false;
  private readonly changeListeners = new Listeners<[change: PodChange]>();
  private readonly errorListeners = new Set<(err: KubeError, namespace: string) => void>();
  private readonly closing = new AbortController();
  private readonly deps: PodCacheDeps;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly source: PodSource,
    private readonly options: PodCacheOptions,
  ) {
    if (options.namespaces.length === 0) throw new Error('PodCache: at least one namespace is required');
    const sleep = options.deps?.sleep ?? realSleep;
    const timer = options.deps?.timer ?? (sleep === realSleep ? realTimer : timerOnSleep(sleep));
    this.deps = { random: Math.random, now: () => Date.now(), ...options.deps, sleep, timer };
    this.unsubscribe = source.onPodObserved({
      observe: (pod) => this.observe(pod),
      held: (ns, name, rv) => this.held(ns, name, rv),
    });
    for (const ns of new Set(options.namespaces)) this.namespaces.set(ns, this.listWatch(ns));
    this.synced = Promise.all([...this.namespaces.values()].map((lw) => lw.synced)).then(() => {
      this.isSynced = true;
    });
    // Callers who never await `synced` must not crash the process with an unhandled rejection.
    this.synced.catch(() => undefined);
  }

  private listWatch(ns: string): ResumableListWatch<V1Pod> {
    const { labelSelector } = this.options;
    return new ResumableListWatch<V1Pod>(
      {
        what: `pods in ${ns}`,
        list: () => this.source.listPods(ns, { labelSelector }),
        watch: (query, onEvent, onDone) =>
          this.source.watchPods(
            ns,
            { labelSelector, ...query, known: (rv) => this.written.delete(rv) },
            (e) => onEvent('pod' in e ? { type: e.type, object: e.pod } : e),
            onDone,
          ),
        onList: (items) => this.replaceNamespace(ns, items),
        onChange: (type, pod) => {
          if (type === 'DELETED') this.remove(ns, pod, 'watch');
          else this.upsert(ns, pod, 'watch');
        },
        onError: (err) => this.emitError(err, ns),
      },
      {
        deps: this.deps,
        signal: this.closing.signal,
        stats: this.stats,
        ...loopTuning(this.options),
      },
    );
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
    return Object.fromEntries([...this.namespaces].map(([ns, lw]) => [ns, lw.resourceVersion]));
  }

  /** Calls `listener` after every change to the cache. Listeners must not throw. Returns the unsubscribe. */
  onChange(listener: (change: PodChange) => void): () => void {
    return this.changeListeners.add(listener);
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
    const rv = pod.metadata?.resourceVersion;
    if (!current || !isKnownNewer(rv, current.metadata?.resourceVersion) || !this.upsert(ns, pod, 'write'))
      return false;
    this.written.add(rv!);
    if (this.written.size > KNOWN_VERSIONS) this.written.delete(this.written.values().next().value!);
    return true;
  }

  /**
   * The cached pod if it is at this version or a later one (the watch was first, maybe with the
   * kubelet's next write too): what an answer of that version would change nothing in.
   */
  held(namespace: string, name: string, resourceVersion: string): V1Pod | undefined {
    const pod = this.pods.get(keyOf(namespace, name));
    const rv = pod?.metadata?.resourceVersion;
    return rv === resourceVersion || isKnownNewer(rv, resourceVersion) ? pod : undefined;
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
  waitFor(
    namespace: string,
    name: string,
    predicate: (pod: V1Pod) => boolean,
    options: WaitOptions,
  ): Promise<WaitResult> {
    if (!this.isSynced) return this.synced.then(() => this.waitFor(namespace, name, predicate, options));
    if (this.closed || options.signal?.aborted) return Promise.resolve('aborted');
    // Not an async function: its promise would wrap this one, two more turns of the microtask
    // queue for every wait (a flow waits at every change of its pod).
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
    let waiting = this.waitersBySignal.get(signal);
    if (!waiting) {
      const all = (waiting = new Set<Waiter>());
      this.waitersBySignal.set(signal, all);
      signal.addEventListener(
        'abort',
        () => {
          for (const w of [...all]) w.abort();
        },
        { once: true },
      );
    }
    waiting.add(waiter);
  }

  private unwatchSignal(signal: AbortSignal, waiter: Waiter): void {
    this.waitersBySignal.get(signal)?.delete(waiter);
  }

  /** Stops every watch and retry; pending waits resolve 'aborted'. */
  close(): void {
    if (this.closed) return;
    this.closing.abort();
    this.unsubscribe();
    for (const set of [...this.waiters.values()]) for (const w of [...set]) w.abort();
    for (const [ns, lw] of this.namespaces)
      lw.failUnsynced(new KubeError(0, 'Closed', `pod cache closed before namespace ${ns} was listed`));
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
      shareUnchanged(pod, previous);
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
    this.changeListeners.notify(change);
    const set = this.waiters.get(key);
    if (set) for (const w of [...set]) w.check();
  }

  private emitError(err: KubeError, ns: string): void {
    for (const l of this.errorListeners) l(err, ns);
  }
}
