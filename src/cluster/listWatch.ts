// One collection kept current the way client-go's reflector does it: list, then watch from the
// list's resourceVersion; when a stream ends or breaks, watch again from the last version seen
// (bookmarks included); when that version has expired (410), list again. Failed attempts back off
// (backoffDelay), a stream that ends at once without any event counts as failed, and a stream
// silent past its liveness deadline (watchLiveness.ts) is ended and watched again: a half-open
// connection is noticed within a minute. The pod cache runs one per namespace, the node cache one for nodes;
// what a list or an event does to the cached objects is theirs (`onList`, `onChange`).
import type { WatchHandle } from './cluster.js';
import { KubeError, toKubeError } from './kubeError.js';
import { realSleep, type Sleep } from '../sleep.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
import {
  DEFAULT_WATCH_LIVENESS_SECONDS,
  defaultWatchTimeoutSeconds,
  livenessDeadline,
  silenceLimitMs,
} from './watchLiveness.js';

/** A watch event with its object under one name, whatever the resource. */
export type ObjectWatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; resourceVersion: string }
  | { type: 'ERROR'; error: KubeError };

/** What each watch request of the loop asks for. */
export interface ResumeQuery {
  resourceVersion: string | undefined;
  timeoutSeconds: number;
  allowWatchBookmarks: true;
}

export interface ListWatchDeps {
  sleep: Sleep;
  random: () => number;
  now: () => number;
}

/** Counters for tests and diagnostics; one object may be shared by several loops. */
export interface ListWatchStats {
  lists: number;
  watches: number;
  /** Relists forced by an expired resourceVersion (410). */
  expired: number;
}

export interface ListWatchSpec<T> {
  /** What is watched, for messages: `pods in team-a`, `nodes`. */
  what: string;
  list(): Promise<{ items: T[]; resourceVersion: string }>;
  watch(
    query: ResumeQuery,
    onEvent: (event: ObjectWatchEvent<T>) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<WatchHandle>;
  /** After a (re)list: the whole collection as listed. */
  onList(items: T[]): void;
  onChange(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: T): void;
  /** A list or a watch failed (the loop retries by itself); an expired version (410) is not a failure. */
  onError?(err: KubeError): void;
}

/** How a loop paces itself; a cache's options take these and hand them on (`loopTuning`). */
export interface ListWatchTuning {
  /** Server-side watch timeout; default a random 55–75% of the liveness deadline per stream (watchLiveness.ts). */
  watchTimeoutSeconds?: number;
  /** A stream silent (no event, no bookmark) this long is ended and watched again. Default 45. */
  watchLivenessSeconds?: number;
  /** A stream that ends sooner than this without any event counts as a failure (back-off grows). Default 1000. */
  minWatchMs?: number;
  /** Back-off between failed list/watch attempts. */
  backoff?: Pick<RetryPolicy, 'baseMs' | 'factor' | 'capMs'>;
}

export interface ListWatchOptions extends ListWatchTuning {
  deps: ListWatchDeps;
  /** Aborting it ends the loop (the owner's close()). */
  signal: AbortSignal;
  stats: ListWatchStats;
}

/** The tuning fields of a cache's options, and only those. */
export function loopTuning(options: ListWatchTuning): ListWatchTuning {
  return {
    watchTimeoutSeconds: options.watchTimeoutSeconds,
    watchLivenessSeconds: options.watchLivenessSeconds,
    minWatchMs: options.minWatchMs,
    backoff: options.backoff,
  };
}

/** The real clock and randomness, with the caller's replacements (tests) over them. */
export function listWatchDeps(deps: Partial<ListWatchDeps> = {}): ListWatchDeps {
  return { sleep: realSleep, random: Math.random, now: () => Date.now(), ...deps };
}

interface WatchOutcome {
  error?: KubeError;
  expired: boolean;
  productive: boolean;
}

export class ResumableListWatch<T extends { metadata?: { resourceVersion?: string } }> {
  /** Resolves once the first list came back; rejects if it failed for good (e.g. 403) or `failUnsynced` was called first. */
  readonly synced: Promise<void>;
  private rv: string | undefined;
  private isSynced = false;
  private resolveSynced!: () => void;
  private rejectSynced!: (err: KubeError) => void;
  private readonly backoff: Pick<RetryPolicy, 'baseMs' | 'factor' | 'capMs'>;
  private readonly minWatchMs: number;

  constructor(
    private readonly spec: ListWatchSpec<T>,
    private readonly options: ListWatchOptions,
  ) {
    this.backoff = options.backoff ?? DEFAULT_RETRY_POLICY;
    this.minWatchMs = options.minWatchMs ?? 1000;
    this.synced = new Promise<void>((res, rej) => ((this.resolveSynced = res), (this.rejectSynced = rej)));
    // Callers who never await `synced` must not crash the process with an unhandled rejection.
    this.synced.catch(() => undefined);
    void this.run();
  }

  /** The version the next watch would resume from (undefined: the next step is a list). */
  get resourceVersion(): string | undefined {
    return this.rv;
  }

  /** Rejects `synced` with `err` unless the first list already came back (the owner closed early). */
  failUnsynced(err: KubeError): void {
    if (!this.isSynced) this.rejectSynced(err);
  }

  private get closed(): boolean {
    return this.options.signal.aborted;
  }

  private async run(): Promise<void> {
    const { deps } = this.options;
    let failures = 0;
    while (!this.closed) {
      if (this.rv === undefined) {
        try {
          await this.listOnce();
          if (this.closed) return;
        } catch (thrown) {
          if (this.closed) return;
          const err = toKubeError(thrown);
          this.spec.onError?.(err);
          // The first list already went through the request retries: give up and say why.
          if (!this.isSynced) return this.rejectSynced(err);
          failures++;
          await deps.sleep(backoffDelay(failures, this.backoff, deps.random), this.options.signal);
          continue;
        }
      }
      const outcome = await this.watchOnce();
      if (this.closed) return;
      if (outcome.error && !outcome.expired) this.spec.onError?.(outcome.error);
      if (outcome.expired) {
        this.options.stats.expired++;
        this.rv = undefined;
      }
      failures = outcome.productive ? 0 : failures + 1;
      if (failures > 0) await deps.sleep(backoffDelay(failures, this.backoff, deps.random), this.options.signal);
    }
  }

  /**
   * One list: its items to `onList`, its version to `rv`. A method of its own so that the list
   * dies with it: held in run()'s frame, which waits on the watches for the whole run, it kept
   * the first view of every pod alive (50,000 pods: ~40 MB).
   */
  private async listOnce(): Promise<void> {
    const list = await this.spec.list();
    if (this.closed) return;
    this.options.stats.lists++;
    this.spec.onList(list.items);
    this.rv = list.resourceVersion;
    if (!this.isSynced) {
      this.isSynced = true;
      this.resolveSynced();
    }
  }

  /** One watch stream, from `rv`, until it ends; `rv` follows every event. */
  private watchOnce(): Promise<WatchOutcome> {
    const { deps, signal } = this.options;
    return new Promise<WatchOutcome>((resolve) => {
      const started = deps.now();
      const liveness = this.options.watchLivenessSeconds ?? DEFAULT_WATCH_LIVENESS_SECONDS;
      const timeoutSeconds = this.options.watchTimeoutSeconds ?? defaultWatchTimeoutSeconds(liveness, deps.random);
      const watchdog = new AbortController();
      let events = 0;
      let eventError: KubeError | undefined;
      let finished = false;
      let handle: WatchHandle | undefined;
      const finish = (doneError?: KubeError) => {
        if (finished) return;
        finished = true;
        watchdog.abort();
        signal.removeEventListener('abort', onClose);
        handle?.abort();
        const error = eventError ?? doneError;
        const expired = error?.code === 410;
        // The server answered the watch request itself with an HTTP error (429, 5xx…): a failure.
        const refused = doneError !== undefined && doneError.code !== 0 && events === 0 && !eventError;
        const productive = !refused && !expired && (events > 0 || deps.now() - started >= this.minWatchMs);
        resolve({ error: this.closed ? undefined : error, expired, productive });
      };
      const onClose = () => finish();
      signal.addEventListener('abort', onClose, { once: true });
      // Counted from the request: a connection that never answers is as dead as one that stopped.
      const alive = livenessDeadline(silenceLimitMs(liveness, timeoutSeconds), deps, watchdog.signal, (silentMs) =>
        finish(
          new KubeError(
            0,
            'Timeout',
            `watch of ${this.spec.what} silent for ${Math.round(silentMs / 1000)}s (no event, no bookmark): watched again`,
          ),
        ),
      );
      this.options.stats.watches++;
      void this.spec
        .watch(
          { resourceVersion: this.rv, timeoutSeconds, allowWatchBookmarks: true },
          (event) => {
            if (finished) return;
            alive.touch();
            if (event.type === 'ERROR') {
              eventError = event.error;
              finish();
              return;
            }
            events++;
            this.apply(event);
          },
          (err) => finish(err),
        )
        .then((h) => {
          handle = h;
          if (finished) h.abort();
        });
    });
  }

  private apply(event: Exclude<ObjectWatchEvent<T>, { type: 'ERROR' }>): void {
    if (event.type === 'BOOKMARK') {
      this.rv = event.resourceVersion;
      return;
    }
    const rv = event.object.metadata?.resourceVersion;
    this.spec.onChange(event.type, event.object);
    if (rv) this.rv = rv;
  }
}
