// core/v1 Events as a kubelet's event recorder writes them: one Event per (object, reason,
// message), named `<object>.<hex nanos>`, whose count and lastTimestamp grow when it repeats.
// The store keeps at most `maxEvents` of them; the oldest go first, as the API server's event
// TTL would remove them, so a long simulation does not grow without bound.
import type { KubeObject, Store } from './store.js';
import { StoreError } from './store.js';
import { rfc3339 } from './clock.js';

interface EventSource {
  component: string;
  host?: string;
}

export interface EventInput {
  /** The object the event is about (a pod). */
  object: KubeObject;
  /** e.g. `spec.containers{nginx}`. */
  fieldPath?: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  source: EventSource;
}

/**
 * A new core/v1 Event as a kubelet's recorder writes it (no eventTime: the old-style Event, whose
 * only validation is involvedObject.namespace == namespace). Pure; both backends' recorders use it.
 */
export function eventBody(name: string, e: EventInput, at: string): KubeObject {
  const meta = e.object.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: meta.namespace ?? 'default' },
    involvedObject: {
      apiVersion: e.object.apiVersion,
      kind: e.object.kind,
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}),
    },
    reason: e.reason,
    message: e.message,
    source: { ...e.source },
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
    type: e.type,
    eventTime: null,
    reportingComponent: e.source.component,
    reportingInstance: e.source.host ?? '',
  } as unknown as KubeObject;
}

/** An Event the recorder wrote; `seq` is its place in the order of use. */
interface Recorded {
  namespace: string;
  name: string;
  seq: number;
}

export class EventRecorder {
  /** Dedup key → the event recorded for it. */
  private readonly names = new Map<string, Recorded>();
  /**
   * Dedup keys, least recently used first, with the `seq` they had when queued: a key used again
   * is queued again, and its older place is skipped. (Taking the first key of the Map, deleting
   * it and re-inserting a used key left deleted slots that every later look for the first key
   * walked past: ~20,000 per Event once the store was full.)
   */
  private order: { k: string; seq: number }[] = [];
  private head = 0;
  private seq = 0;

  constructor(
    private readonly store: Store,
    private readonly now: () => Date,
    private readonly maxEvents = 20_000,
  ) {}

  record(e: EventInput): void {
    const meta = e.object.metadata;
    const namespace = meta.namespace ?? 'default';
    const k = [meta.uid, e.fieldPath ?? '', e.type, e.reason, e.message, e.source.component, e.source.host ?? ''].join(
      '\u0000',
    );
    const at = rfc3339(this.now());
    const known = this.names.get(k);
    const existing = known && this.store.get('events', known.namespace, known.name);
    try {
      if (existing) {
        this.store.update('events', {
          ...existing,
          count: ((existing.count as number | undefined) ?? 1) + 1,
          lastTimestamp: at,
        });
        // Move to the end: recently repeated events are the last to be dropped.
        known.seq = ++this.seq;
        this.order.push({ k, seq: known.seq });
        this.trim();
        return;
      }
      const name = `${meta.name}.${this.nanosHex()}`;
      this.store.create('events', eventBody(name, e, at));
      const seq = ++this.seq;
      this.names.set(k, { namespace, name, seq });
      this.order.push({ k, seq });
      this.trim();
    } catch (err) {
      // Someone deleted the event (or its namespace) meanwhile: events are best effort, as in Kubernetes.
      if (!(err instanceof StoreError)) throw err;
    }
  }

  private trim(): void {
    while (this.names.size > this.maxEvents) {
      const { k, seq } = this.order[this.head++]!;
      const ref = this.names.get(k);
      if (ref?.seq !== seq) continue; // used again since: queued again further on
      this.names.delete(k);
      if (this.store.get('events', ref.namespace, ref.name)) this.store.remove('events', ref.namespace, ref.name);
    }
    // Compacted now and then: the places left behind (trimmed, or used again) are dropped.
    if (this.order.length - this.head > 2 * this.names.size + 1024) {
      this.order = this.order.slice(this.head).filter((e) => this.names.get(e.k)?.seq === e.seq);
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  /** Nanoseconds since the epoch in hex, strictly increasing so that names never collide. */
  private nanosHex(): string {
    let n = BigInt(this.now().getTime()) * 1_000_000n;
    if (n <= lastNanos) n = lastNanos + 1n;
    lastNanos = n;
    return n.toString(16);
  }
}

/** Shared by every recorder (kubelet, scheduler) so that their event names never collide. */
let lastNanos = 0n;
