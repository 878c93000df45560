// Reads and writes the rollout record ConfigMap `kwave-<plan>` (see record.ts for its keys).
//
// Writes: during a wave the runner may report many events a second; the store folds them in at
// O(1) each (recordFolder.ts) and writes at most once per `throttleMs` (the latest state wins),
// and transitions (`save(r, {flush: true})`) at once. Every write is a PUT carrying the resourceVersion last seen, of the whole
// data with the runner's keys replaced: a write by anyone else in between makes it answer 409,
// and then the store reads the ConfigMap again and re-applies only its own keys, so keys it does
// not own survive, except an earlier kwave's approvals and requests, which no longer count
// (record.ts): the first write of a new run drops them.
//
// Approvals: read from the decisions ConfigMap `kwave-<plan>.control` (record.ts), which the
// runner never writes; `waitForApproval` follows it with a watch (configMapWatch.ts); no polling.
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Cluster } from '../cluster/cluster.js';
import { watchConfigMap } from '../cluster/configMapWatch.js';
import { KubeError, toKubeError } from '../cluster/kubeError.js';
import { isKnownOlder } from '../cluster/resourceVersion.js';
import type { RolloutEvent } from '../rollout/events.js';
import { controlName, recordName, type Approval, type RolloutRecord } from './record.js';
import { isTransition } from './reducer.js';
import { RecordFolder } from './recordFolder.js';
import { CONFIGMAP_DATA_LIMIT } from './bounds.js';
import {
  decodeApprovals,
  decodeRecord,
  encodeRecord,
  othersBytes,
  recordConfigMap,
  recordLabels,
  withoutLegacyDecisions,
  type DecodedRecord,
} from './codec.js';

/** The slice of Cluster the store needs (tests pass a fake). */
export type RecordApi = Pick<Cluster, 'getConfigMap' | 'createConfigMap' | 'updateConfigMap' | 'watchConfigMaps'>;

export interface Timers {
  now: () => number;
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
}

const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface RecordStoreOptions {
  /** The plan's first target namespace. */
  namespace: string;
  /** The namespace of the decisions ConfigMap (the plan's `controlNamespace`); default `namespace`. */
  controlNamespace?: string;
  plan: string;
  /** Least time between two throttled writes. Default 1000 ms. */
  throttleMs?: number;
  /** Failed background (throttled) writes; they are retried with the next write. */
  onError?: (err: KubeError) => void;
  /**
   * The record no longer fits the ConfigMap whole and leaves something out (bounds.ts), said once
   * each time what it leaves out changes; `''` once it fits whole again.
   */
  onTrim?: (note: string) => void;
  timers?: Timers;
}

/** 409s in a row before a write gives up (each one means someone else wrote in between). */
const MAX_CONFLICTS = 5;

export class RecordStore {
  readonly namespace: string;
  readonly name: string;
  private readonly controlNamespace: string;
  /** The decisions ConfigMap's name. */
  private readonly control: string;
  private readonly throttleMs: number;
  private readonly timers: Timers;
  private readonly onError: (err: KubeError) => void;
  private readonly onTrim: (note: string) => void;
  /** What the last write left out, to say it only when it changes. */
  private trimmedSaid = '';
  /** The ConfigMap as last seen (from a read or our own write): its data and resourceVersion. */
  private seen: V1ConfigMap | undefined;
  private latest: RecordFolder | undefined;
  private dirty = false;
  private writing: Promise<void> | undefined;
  private timer: unknown;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private writes = 0;

  constructor(
    private readonly cluster: RecordApi,
    options: RecordStoreOptions,
  ) {
    this.namespace = options.namespace;
    this.name = recordName(options.plan);
    this.controlNamespace = options.controlNamespace ?? options.namespace;
    this.control = controlName(options.plan);
    this.throttleMs = options.throttleMs ?? 1000;
    this.timers = options.timers ?? realTimers;
    this.onError = options.onError ?? (() => undefined);
    this.onTrim = options.onTrim ?? (() => undefined);
  }

  /** The record as last saved (written or waiting to be written). */
  get current(): RolloutRecord | undefined {
    return this.latest?.record;
  }

  /** ConfigMap writes made so far (for tests and metrics). */
  get writeCount(): number {
    return this.writes;
  }

  /**
   * Reads the record: undefined if the plan was never run here (404); a damaged record comes
   * back as `{ok: false, problem}`. Does not make it the current record: `save` it for that.
   */
  async load(): Promise<DecodedRecord | undefined> {
    const cm = await this.read();
    return cm ? decodeRecord(cm) : undefined;
  }

  /** Saves a record now (the first record of a run, or one that must not wait). */
  async create(record: RolloutRecord): Promise<void> {
    await this.save(record, { flush: true });
  }

  /**
   * Makes `record` the current record and writes it: at once with `flush`, else within
   * `throttleMs` of the last write (later saves in between replace it). A flushed write that
   * fails throws KubeError; a throttled one reports to `onError` and is retried.
   */
  async save(record: RolloutRecord, options: { flush?: boolean } = {}): Promise<void> {
    this.latest = new RecordFolder(record);
    return this.changed(options.flush === true);
  }

  /** Folds a runner event into the current record and saves it (flushing on transitions). */
  async apply(event: RolloutEvent): Promise<void> {
    if (!this.latest) throw new Error('RecordStore.apply: no current record; save or create one first');
    this.latest.apply(event);
    return this.changed(isTransition(event));
  }

  /**
   * `apply` for an event sink (synchronous, never throws): events are folded in the order given;
   * a failed write goes to `onError` and is retried with the next write.
   */
  feed(event: RolloutEvent): void {
    this.apply(event).catch((err: unknown) => this.onError(toKubeError(err)));
  }

  /** Writes what is not written yet and waits for it; call before exit. */
  async flush(): Promise<void> {
    this.cancelTimer();
    while (this.writing) await this.writing.catch(() => undefined);
    this.cancelTimer();
    if (this.dirty) await this.startWrite();
  }

  /** The approval of `wave` for the current revision, read fresh from the decisions ConfigMap. */
  async isApproved(wave: number): Promise<Approval | undefined> {
    try {
      return this.approvalIn(await this.cluster.getConfigMap(this.controlNamespace, this.control), wave);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /**
   * Resolves with the approval of `wave` once `kwave approve` records it (at once if it is
   * there), or with undefined when `signal` aborts. Follows the decisions ConfigMap with a watch.
   */
  waitForApproval(wave: number, signal: AbortSignal): Promise<Approval | undefined> {
    return new Promise<Approval | undefined>((resolve) => {
      const stop = new AbortController();
      const finish = (approval: Approval | undefined) => {
        signal.removeEventListener('abort', onAbort);
        stop.abort();
        resolve(approval);
      };
      const onAbort = () => finish(undefined);
      if (signal.aborted) return finish(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      void watchConfigMap(
        this.cluster,
        this.controlNamespace,
        this.control,
        (cm) => {
          if (!cm) return;
          const approval = this.approvalIn(cm, wave);
          if (approval) finish(approval);
        },
        { signal: stop.signal, onError: this.onError },
      );
    });
  }

  /** Stops a pending throttled write without writing (use flush() to write it). */
  close(): void {
    this.cancelTimer();
  }

  // ---- internals -------------------------------------------------------------------------------

  private async changed(flush: boolean): Promise<void> {
    this.dirty = true;
    if (flush) return this.flush();
    if (this.timer === undefined && this.writing === undefined) this.schedule();
  }

  private approvalIn(cm: V1ConfigMap, wave: number): Approval | undefined {
    const approval = decodeApprovals(cm.data ?? {})[wave];
    if (!approval) return undefined;
    // An approval given for another revision of the plan does not approve this one.
    const revision = this.latest?.revision;
    if (approval.revision !== undefined && revision !== undefined && approval.revision !== revision) return undefined;
    return approval;
  }

  private async read(): Promise<V1ConfigMap | undefined> {
    try {
      const cm = await this.cluster.getConfigMap(this.namespace, this.name);
      this.remember(cm);
      return cm;
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) {
        this.seen = undefined;
        return undefined;
      }
      throw err;
    }
  }

  /** Keeps the newest state seen: reads and writes may finish out of order. */
  private remember(cm: V1ConfigMap): void {
    if (this.seen && isKnownOlder(cm.metadata?.resourceVersion, this.seen.metadata?.resourceVersion)) return;
    this.seen = cm;
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    const wait = Math.max(0, this.lastWriteAt + this.throttleMs - this.timers.now());
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      // A write in flight reschedules when it ends; a flush may have written it already.
      if (this.writing || !this.dirty) return;
      this.startWrite().catch((err: unknown) => this.onError(toKubeError(err)));
    }, wait);
  }

  private startWrite(): Promise<void> {
    const record = this.latest!.record;
    this.dirty = false;
    const write = this.write(record)
      .catch((err: unknown) => {
        // Not written: write it (or anything newer) next time.
        this.dirty = true;
        throw err;
      })
      .finally(() => {
        this.writing = undefined;
        this.lastWriteAt = this.timers.now();
        if (this.dirty && this.timer === undefined) this.schedule();
      });
    this.writing = write;
    return write;
  }

  /** The runner's keys fitted beside the other writers' keys of `data`; throws when they cannot fit. */
  private encode(record: RolloutRecord, data: Record<string, string> | undefined): Record<string, string> {
    const encoded = encodeRecord(record, othersBytes(data));
    const said = encoded.trimmed.join(', ');
    if (said !== this.trimmedSaid) {
      this.trimmedSaid = said;
      this.onTrim(
        said === ''
          ? ''
          : `the rollout record ${this.name} would not fit a ConfigMap (${CONFIGMAP_DATA_LIMIT} bytes) whole: it leaves out ${said}`,
      );
    }
    if (encoded.ok) return encoded.data;
    throw new KubeError(
      422,
      'RecordTooLarge',
      `not written: the rollout record ${this.name} needs ${encoded.bytes} bytes beside ${othersBytes(data)} bytes of approvals and control requests, over a ConfigMap's ${CONFIGMAP_DATA_LIMIT}; kwave status shows it as of ${this.seenUpdatedAt() ?? 'its last write'}`,
    );
  }

  private seenUpdatedAt(): string | undefined {
    const decoded = this.seen ? decodeRecord(this.seen) : undefined;
    return decoded?.ok ? decoded.record.updatedAt : undefined;
  }

  /** One guarded write of the runner's keys; on 409, read again and re-apply only them. */
  private async write(record: RolloutRecord): Promise<void> {
    for (let conflicts = 0; ;) {
      if (!this.seen) {
        try {
          const cm = recordConfigMap(this.namespace, record, this.encode(record, undefined));
          this.remember(await this.cluster.createConfigMap(this.namespace, cm));
          this.writes++;
          return;
        } catch (err) {
          if (!(err instanceof KubeError && err.code === 409)) throw err;
          // Created by someone else meanwhile (or by our own retried request): read and update.
          if (++conflicts > MAX_CONFLICTS) throw err;
          await this.read();
          continue;
        }
      }
      const base = this.seen;
      const kept = withoutLegacyDecisions(base.data);
      const body: V1ConfigMap = {
        ...base,
        metadata: {
          ...base.metadata,
          name: this.name,
          namespace: this.namespace,
          labels: { ...base.metadata?.labels, ...recordLabels(record.plan) },
        },
        data: { ...kept, ...this.encode(record, kept) },
      };
      try {
        this.remember(await this.cluster.updateConfigMap(this.namespace, body));
        this.writes++;
        return;
      } catch (err) {
        if (!(err instanceof KubeError) || (err.code !== 409 && err.code !== 404)) throw err;
        if (++conflicts > MAX_CONFLICTS) throw err;
        this.seen = undefined;
        await this.read();
      }
    }
  }
}
