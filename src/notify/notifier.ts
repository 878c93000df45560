// Sends notifications (`spec.notify`) in the background. Touches the network only (HTTP POSTs to
// the plan's receivers) and reads bearer tokens from the environment or files.
//
// Never holds up or fails the rollout: `sink` only queues (synchronously, never throws); one
// worker per receiver sends its queue in order. Each notification gets `attempts` tries (a
// timeout, a network error, 408, 429 or 5xx is retried after a doubling back-off; another 4xx or
// a missing token is not: it will not mend in seconds). Each queue holds at most `maxQueue`
// notifications: when a receiver falls that far behind the oldest is dropped, so the latest
// news (the halt, the end) still goes out. Every notification ends counted once as `sent`,
// `failed` or `dropped` (kwave_notifications_total{result}); failures are reported to `onResult`
// without the token, and with the receiver's URL through redactUrl only (a Slack webhook's path
// is its secret). The URL may come from the plan or, read at each attempt, from an environment
// variable or a file (`urlEnv` / `urlFile`).
// `flush(ms)` waits at most `ms` for the queues, then gives up what is left (`dropped`).
import { readFile as fsReadFile } from 'node:fs/promises';
import type { NotifyTarget, UrlSource } from '../plan/types.js';
import type { EventSink, RolloutEvent } from '../rollout/events.js';
import { readBearerToken, redactToken } from '../gates/bearerToken.js';
import { readUrl, urlSourceName } from '../gates/urlSource.js';
import { hideUrlIn } from '../redactUrl.js';
import { realSleep, type Sleep } from '../sleep.js';
import { notificationBody } from './body.js';
import { advance, notificationOf, runStart, type Notification, type RunSoFar } from './notification.js';

export const NOTIFY_RESULTS = ['sent', 'failed', 'dropped'] as const;
export type NotifyResult = (typeof NOTIFY_RESULTS)[number];

export interface NotifyReport {
  result: NotifyResult;
  /** `notify[0] (https://hooks.example/…)`: the receiver, its URL through redactUrl. */
  target: string;
  kind: Notification['kind'];
  attempts: number;
  /** Why it was not sent (failed, dropped). */
  error?: string;
}

export interface NotifierOptions {
  /** The plan's revision, carried by every notification. */
  revision: string;
  fetch?: typeof fetch;
  env?: Record<string, string | undefined>;
  readFile?: (path: string) => Promise<string>;
  sleep?: Sleep;
  /** Tries per notification (default 3). */
  attempts?: number;
  /** First back-off (default 1000 ms); doubles per retry, at most 10 s. */
  backoffMs?: number;
  /** Notifications waiting per receiver before the oldest is dropped (default 100). */
  maxQueue?: number;
  onResult?: (report: NotifyReport) => void;
}

const MAX_BACKOFF_MS = 10_000;

/** `notify[i] (scheme://host/…)`, or where its URL is read from: the path of a chat webhook URL is its credential. */
export function receiverName(source: string | UrlSource, index: number): string {
  return `notify[${index}] (${urlSourceName(typeof source === 'string' ? { url: source } : source)})`;
}

type Attempt = { ok: true } | { ok: false; retry: boolean; error: string };

interface Queued {
  notification: Notification;
  body: string;
}

class Receiver {
  readonly name: string;
  readonly queue: Queued[] = [];
  working: Promise<void> | undefined;

  constructor(
    readonly target: NotifyTarget,
    index: number,
  ) {
    this.name = receiverName(target, index);
  }
}

export class Notifier {
  private readonly receivers: Receiver[];
  private readonly opts: Required<Omit<NotifierOptions, 'onResult'>> & Pick<NotifierOptions, 'onResult'>;
  private readonly closing = new AbortController();
  private run: RunSoFar = runStart();
  private readonly counts: Record<NotifyResult, number> = { sent: 0, failed: 0, dropped: 0 };

  constructor(targets: readonly NotifyTarget[], options: NotifierOptions) {
    this.receivers = targets.map((t, i) => new Receiver(t, i));
    this.opts = {
      revision: options.revision,
      fetch: options.fetch ?? fetch,
      env: options.env ?? process.env,
      readFile: options.readFile ?? ((p: string) => fsReadFile(p, 'utf8')),
      sleep: options.sleep ?? realSleep,
      attempts: Math.max(1, options.attempts ?? 3),
      backoffMs: options.backoffMs ?? 1000,
      maxQueue: Math.max(1, options.maxQueue ?? 100),
      onResult: options.onResult,
    };
  }

  /** An event sink: queues the notifications `event` makes. Synchronous; never throws. */
  readonly sink: EventSink = (event: RolloutEvent) => {
    try {
      this.notify(event);
    } catch {
      // A notification must never break the rollout; notificationOf is pure and total, so this is a bug guard.
    }
  };

  /** Notifications ended so far, by result. */
  get results(): Readonly<Record<NotifyResult, number>> {
    return { ...this.counts };
  }

  /** Notifications queued or being sent. */
  get pending(): number {
    return this.receivers.reduce((n, r) => n + r.queue.length + (r.working ? 1 : 0), 0);
  }

  private notify(event: RolloutEvent): void {
    const n = notificationOf(event, this.run, this.opts.revision);
    this.run = advance(this.run, event);
    if (!n || this.closing.signal.aborted) return;
    for (const r of this.receivers) {
      if (!r.target.on.includes(n.kind)) continue;
      r.queue.push({ notification: n, body: notificationBody(n, r.target.format) });
      while (r.queue.length > this.opts.maxQueue) {
        const old = r.queue.shift()!;
        this.report(
          r,
          old.notification,
          'dropped',
          0,
          `more than ${this.opts.maxQueue} notifications waiting for this receiver`,
        );
      }
      r.working ??= this.work(r);
    }
  }

  /** Waits at most `withinMs` for every queue to empty; what is left then is dropped. Resolves with how many were. */
  async flush(withinMs: number): Promise<number> {
    const before = this.counts.dropped;
    const all = () => Promise.all(this.receivers.map((r) => r.working));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, withinMs))));
    await Promise.race([all(), deadline]);
    clearTimeout(timer);
    this.closing.abort();
    await all();
    return this.counts.dropped - before;
  }

  private report(r: Receiver, n: Notification, result: NotifyResult, attempts: number, error?: string): void {
    this.counts[result]++;
    this.opts.onResult?.({ result, target: r.name, kind: n.kind, attempts, ...(error ? { error } : {}) });
  }

  private async work(r: Receiver): Promise<void> {
    try {
      for (let next = r.queue.shift(); next; next = r.queue.shift()) {
        if (this.closing.signal.aborted) {
          this.report(r, next.notification, 'dropped', 0, 'kwave was exiting');
          continue;
        }
        await this.deliver(r, next);
      }
    } finally {
      r.working = undefined;
    }
  }

  private async deliver(r: Receiver, q: Queued): Promise<void> {
    let backoff = this.opts.backoffMs;
    let last = '';
    for (let attempt = 1; attempt <= this.opts.attempts; attempt++) {
      const outcome = await this.attempt(r.target, q.body);
      if (outcome.ok) return this.report(r, q.notification, 'sent', attempt);
      last = outcome.error;
      if (this.closing.signal.aborted)
        return this.report(r, q.notification, 'dropped', attempt, `${last}; kwave was exiting`);
      if (!outcome.retry) return this.report(r, q.notification, 'failed', attempt, last);
      if (attempt < this.opts.attempts) {
        if (!(await this.opts.sleep(backoff, this.closing.signal)))
          return this.report(r, q.notification, 'dropped', attempt, `${last}; kwave was exiting`);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
    this.report(r, q.notification, 'failed', this.opts.attempts, `${last} (after ${this.opts.attempts} attempts)`);
  }

  private async attempt(target: NotifyTarget, body: string): Promise<Attempt> {
    // Read per attempt: a mounted token or URL file may rotate.
    const sources = { env: this.opts.env, readFile: this.opts.readFile };
    const to = await readUrl(target, sources);
    if ('error' in to) return { ok: false, retry: false, error: to.error };
    const auth = await readBearerToken(target.auth, sources);
    if (auth.error) return { ok: false, retry: false, error: auth.error };
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (auth.token) headers.Authorization = `Bearer ${auth.token}`;
    const timeout = AbortSignal.timeout(target.timeoutMs);
    try {
      const res = await this.opts.fetch(to.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.any([timeout, this.closing.signal]),
        redirect: 'error',
      });
      // Drain the body so the connection is freed; its text is not shown (it may echo the request).
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status <= 299) return { ok: true };
      const retry = res.status === 408 || res.status === 429 || res.status >= 500;
      return { ok: false, retry, error: `answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}` };
    } catch (err) {
      const cause = (err as { cause?: unknown })?.cause;
      const why = timeout.aborted
        ? `no answer within ${target.timeoutMs} ms`
        : this.closing.signal.aborted
          ? 'cut off'
          : cause instanceof Error
            ? cause.message
            : String(err);
      return { ok: false, retry: true, error: hideUrlIn(redactToken(why, auth.token), to.url) };
    }
  }
}
