// The rollout record kept current event by event at O(1) per pod event, for the store: the pods
// in flight (hundreds in a wide wave) live in a map by pod, and the record with its list is made
// only when asked for — when it is written, at most once a second. Folding the same events with
// applyEvent gives the same record (reducer.ts and inFlight.ts define both; the property test checks it).
import type { RolloutEvent } from '../rollout/events.js';
import type { InFlightPod, RolloutRecord } from './record.js';
import { changeInFlightMap, inFlightChange } from './inFlight.js';
import { foldBesidesInFlight } from './reducer.js';

export class RecordFolder {
  /** The record but for its pods in flight and `updatedAt`, kept apart: most events (a pod's step) change nothing else. */
  private base: RolloutRecord;
  private updatedAt: string;
  private readonly inFlight = new Map<string, InFlightPod>();
  private made: RolloutRecord | undefined;

  constructor(record: RolloutRecord) {
    this.base = record;
    this.updatedAt = record.updatedAt;
    for (const p of record.inFlight) this.inFlight.set(p.pod, p);
    this.made = record;
  }

  apply(event: RolloutEvent): void {
    this.base = foldBesidesInFlight(this.base, event);
    this.updatedAt = event.time;
    changeInFlightMap(this.inFlight, inFlightChange(event));
    this.made = undefined;
  }

  /** The record as folded so far (the same object until the next event). */
  get record(): RolloutRecord {
    return (this.made ??= { ...this.base, updatedAt: this.updatedAt, inFlight: [...this.inFlight.values()] });
  }

  /** The record's revision, without making the record. */
  get revision(): string {
    return this.base.revision;
  }
}
