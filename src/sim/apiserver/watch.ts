// Watch streams: one JSON event per line (`{"type":"ADDED","object":{…}}`), starting with synthetic
// ADDED events for the current objects (resourceVersion unset or 0) or with the changes after a
// given version (or an ERROR event with a 410 Status when that version has left the window), then
// every change in order. Objects that stop matching the selectors are sent as DELETED, as the
// real watch cache does. Bookmarks, timeouts and fault-injected cuts end or punctuate the stream.
import { randomInt } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Faults } from '../faults.js';
import type { Change, KubeObject, Store } from '../store.js';
import { frozenJson } from './json.js';
import { drained } from './http.js';
import type { ListCache } from './listCache.js';
import type { Representation } from './negotiate.js';
import type { Predicate } from './predicate.js';
import { apiVersionOf, type ResourceInfo } from './resources.js';
import { badRequest, failure } from './status.js';
import { toTable, type IncludeObject } from './table/index.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * What a watcher with `predicate` sees of a change: ADDED when an object starts to match, MODIFIED
 * while it keeps matching, DELETED (with its previous content and the change's version) when it
 * stops matching or is deleted; nothing when it matched neither before nor after.
 */
export function eventFor(
  change: Change,
  predicate: Predicate,
): { type: WatchEventType; object: KubeObject } | undefined {
  const now = change.type !== 'DELETED' && predicate.matches(change.object);
  const before = change.type !== 'ADDED' && change.previous !== undefined && predicate.matches(change.previous);
  if (now && before) return { type: 'MODIFIED', object: change.object };
  if (now) return { type: 'ADDED', object: change.object };
  if (!before) return undefined;
  if (change.type === 'DELETED') return { type: 'DELETED', object: change.object };
  const prev = change.previous!;
  return { type: 'DELETED', object: { ...prev, metadata: { ...prev.metadata, resourceVersion: String(change.rv) } } };
}

export interface WatchRequest {
  info: ResourceInfo;
  predicate: Predicate;
  representation: Representation;
  include: IncludeObject;
  query: URLSearchParams;
}

export interface WatchDeps {
  store: Store;
  cache: ListCache;
  faults: Faults;
  now: () => Date;
  bookmarkIntervalMs: number;
}

/**
 * Writes lines in order, as fast as the client takes them; the first source is drained first.
 * Lines pushed in one turn of the event loop go out together in one write on the next (the
 * kubelet's batch of status writes, the answers to a burst of patches): one chunk, one TLS record
 * and one socket write for all of them, instead of one per change.
 */
class LinePump {
  private readonly queue: string[] = [];
  private head = 0;
  private running = false;
  private ending = false;
  private scheduled: NodeJS.Immediate | undefined;

  constructor(
    private readonly res: ServerResponse,
    private initial?: Iterator<string>,
  ) {}

  push(line: string): void {
    this.queue.push(line);
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      void this.pump();
    });
  }

  /** Ends the response once everything queued has been written. */
  end(): void {
    this.ending = true;
    void this.pump();
  }

  private next(): string | undefined {
    if (this.initial) {
      const n = this.initial.next();
      if (!n.done) return n.value;
      this.initial = undefined;
    }
    if (this.head < this.queue.length) {
      const line = this.queue[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      return line;
    }
    return undefined;
  }

  async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (!this.res.destroyed) {
        const lines: string[] = [];
        let size = 0;
        let line: string | undefined;
        while (size < 256 * 1024 && (line = this.next()) !== undefined) {
          lines.push(line);
          size += line.length;
        }
        if (size === 0) break;
        // Encoded once here: written as a string, it was walked twice (the chunk's length, then the bytes).
        if (!this.res.write(Buffer.from(lines.join('')))) await drained(this.res);
      }
      if (this.ending && !this.res.destroyed && !this.res.writableEnded) this.res.end();
    } finally {
      this.running = false;
    }
  }
}

/**
 * The slow-watch fault between the store and a stream: each line is handed on `delayMs()` after
 * its change (read live, so the fault can be switched at run time), never before a line queued
 * earlier. With no delay and nothing queued, at once.
 */
class DelayedLines {
  private readonly queue: { due: number; line: string }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly delayMs: () => number,
    private readonly deliver: (line: string) => void,
  ) {}

  push(line: string): void {
    const delay = this.delayMs();
    if (!(delay > 0) && this.queue.length === 0) return this.deliver(line);
    this.queue.push({ due: Date.now() + Math.max(0, delay), line });
    this.timer ??= setTimeout(() => this.release(), Math.max(0, this.queue[0]!.due - Date.now()));
  }

  private release(): void {
    this.timer = undefined;
    while (this.queue.length > 0 && this.queue[0]!.due <= Date.now()) this.deliver(this.queue.shift()!.line);
    if (this.queue.length > 0) this.timer = setTimeout(() => this.release(), this.queue[0]!.due - Date.now());
  }

  close(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

function parseTimeoutSeconds(query: URLSearchParams): number {
  const t = query.get('timeoutSeconds');
  if (t !== null && t !== '' && !/^\d+$/.test(t))
    throw badRequest(`timeoutSeconds: Invalid value: ${JSON.stringify(t)}: must be a non-negative integer`);
  // Absent or 0: the server picks 30 to 60 minutes, as kube-apiserver does.
  return t === null || t === '' || Number(t) === 0 ? randomInt(1800, 3601) : Number(t);
}

const truthy = (v: string | null) => v === 'true' || v === '1';

/** Serves a watch until timeout, fault cut, or the client going away. Throws ApiError before any byte is sent. */
export function serveWatch(res: ServerResponse, request: WatchRequest, deps: WatchDeps): void {
  const { info, predicate, representation, include, query } = request;
  const { store, cache } = deps;
  const timeoutSeconds = parseTimeoutSeconds(query);
  const allowBookmarks = truthy(query.get('allowWatchBookmarks'));
  const rvParam = query.get('resourceVersion') ?? '';
  const sendInitialParam = query.get('sendInitialEvents');
  const sendInitial = truthy(sendInitialParam);
  if (sendInitialParam !== null) {
    if (query.get('resourceVersionMatch') !== 'NotOlderThan') {
      throw badRequest(
        'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set to NotOlderThan',
      );
    }
    if (!allowBookmarks)
      throw badRequest(
        'allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true',
      );
  }
  if (rvParam !== '' && rvParam !== '0' && !/^\d+$/.test(rvParam))
    throw badRequest(`invalid resource version: ${JSON.stringify(rvParam)}`);

  let firstTable = true;
  const line = (type: string, obj: unknown): string => {
    let text: string;
    if (type === 'ERROR' || type === 'BOOKMARK') text = JSON.stringify(obj);
    else if (representation.as === 'table') {
      const o = obj as KubeObject;
      text = JSON.stringify(
        toTable(
          info.resource,
          [o],
          { resourceVersion: o.metadata.resourceVersion },
          { apiVersion: representation.apiVersion, include, withColumns: firstTable, now: deps.now() },
        ),
      );
      firstTable = false;
    } else if (representation.as === 'metadata') {
      text = JSON.stringify({
        kind: 'PartialObjectMetadata',
        apiVersion: representation.apiVersion,
        metadata: (obj as KubeObject).metadata,
      });
    } else text = frozenJson(obj as object);
    return `{"type":"${type}","object":${text}}\n`;
  };
  const bookmark = (annotations?: Record<string, string>) =>
    line('BOOKMARK', {
      kind: info.kind,
      apiVersion: apiVersionOf(info),
      metadata: { resourceVersion: String(store.resourceVersion), ...(annotations ? { annotations } : {}) },
    });

  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();
  res.socket?.setNoDelay(true);

  // From here on, the subscription and the starting point are taken in the same tick: no change
  // can fall between them.
  let initial: Iterator<string> | undefined;
  let since = 0;
  if (rvParam === '' || rvParam === '0' || sendInitial) {
    const snap = cache.snapshot(info.resource);
    since = snap.rv;
    const items = snap.items;
    initial = (function* () {
      for (const obj of items) if (predicate.matches(obj)) yield line('ADDED', obj);
      if (sendInitial && allowBookmarks) yield bookmark({ 'k8s.io/initial-events-end': 'true' });
    })();
  } else {
    since = Number(rvParam);
    const changes = store.changesSince(info.resource, since);
    if (changes === 'expired') {
      const status = failure(410, 'Expired', `too old resource version: ${since} (${store.oldestResumableVersion})`);
      res.end(line('ERROR', status));
      return;
    }
    const lines = changes
      .map((c) => eventFor(c, predicate))
      .filter((e) => e !== undefined)
      .map((e) => line(e.type, e.object));
    initial = lines[Symbol.iterator]();
  }
  const pump = new LinePump(res, initial);
  const delayed = new DelayedLines(
    () => deps.faults.watchDelayMs,
    (text) => pump.push(text),
  );
  const unsubscribe = store.subscribe((change) => {
    if (change.resource !== info.resource || change.rv <= since) return;
    const e = eventFor(change, predicate);
    if (e) delayed.push(line(e.type, e.object));
  });
  void pump.pump();

  const started = Date.now();
  const timers: NodeJS.Timeout[] = [];
  const cleanup = () => {
    unsubscribe();
    delayed.close();
    for (const t of timers) clearTimeout(t);
  };
  res.on('close', cleanup);

  // Bookmarks as kube-apiserver's watch cache sends them (cacheWatcher.nextBookmarkTime): one
  // every `bookmarkIntervalMs` (a minute by default) and one 2 s before the timeout, so that the
  // next watch resumes from close to the end; none when the stream ends. Behind any change a slow
  // watch holds back, so that no bookmark names a version whose changes were not sent yet.
  let lastBookmark = Date.now();
  if (allowBookmarks && timeoutSeconds > 2)
    timers.push(
      setTimeout(
        () => {
          lastBookmark = Date.now();
          delayed.push(bookmark());
        },
        (timeoutSeconds - 2) * 1000,
      ),
    );
  timers.push(
    setTimeout(() => {
      cleanup();
      pump.end();
    }, timeoutSeconds * 1000),
  );
  // Once a second: a bookmark when one is due, and the watch-cut fault (read live, so it can be
  // switched on while streams are open).
  const tick = setInterval(
    () => {
      const cut = deps.faults.watchCutSeconds;
      if (cut > 0 && Date.now() - started >= cut * 1000) {
        cleanup();
        res.destroy();
        return;
      }
      if (allowBookmarks && Date.now() - lastBookmark >= deps.bookmarkIntervalMs) {
        lastBookmark = Date.now();
        delayed.push(bookmark());
      }
    },
    Math.min(1000, Math.max(50, deps.bookmarkIntervalMs)),
  );
  timers.push(tick);
}
