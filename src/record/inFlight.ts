// The record's pods in flight, event by event: as a list (the record) or, in O(1) per event, as a
// map by pod (recordFolder.ts). Both take the same change from an event. Pure but for the map.
import type { RolloutEvent } from '../rollout/events.js';
import type { InFlightPod } from './record.js';

/** What an event does to the pods in flight: a run starts with none; a pod enters at its start (last), moves on a step, leaves at its end. */
export type InFlightChange =
  | { kind: 'clear' }
  | { kind: 'start'; entry: InFlightPod }
  | { kind: 'step'; pod: string; step: string; at: string }
  | { kind: 'end'; pod: string };

export function inFlightChange(e: RolloutEvent): InFlightChange | undefined {
  switch (e.event) {
    case 'rollout-start':
      return { kind: 'clear' };
    case 'pod-start':
      return { kind: 'start', entry: { pod: e.pod, wave: e.wave, step: 'started', since: e.time, stepAt: e.time } };
    case 'pod-step':
      return { kind: 'step', pod: e.pod, step: e.step, at: e.time };
    case 'pod-end':
      return { kind: 'end', pod: e.pod };
    default:
      return undefined;
  }
}

/** The change made to a list (a new list, in order of entry). */
export function changedList(list: InFlightPod[], c: InFlightChange | undefined): InFlightPod[] {
  if (!c) return list;
  switch (c.kind) {
    case 'clear':
      return [];
    case 'start':
      return [...list.filter((p) => p.pod !== c.entry.pod), c.entry];
    case 'step':
      return list.map((p) => (p.pod === c.pod ? { ...p, step: c.step, stepAt: c.at } : p));
    case 'end':
      return list.filter((p) => p.pod !== c.pod);
  }
}

/** The same change made to a map by pod, in place, in O(1); its order of entry is the list's. */
export function changeInFlightMap(map: Map<string, InFlightPod>, c: InFlightChange | undefined): void {
  if (!c) return;
  switch (c.kind) {
    case 'clear':
      return map.clear();
    case 'start':
      map.delete(c.entry.pod);
      map.set(c.entry.pod, c.entry);
      return;
    case 'step': {
      // Written out, not spread: one a step of every pod. Every entry comes from a start (a run's
      // first event clears those of the record it resumes), so these are all its fields.
      const p = map.get(c.pod);
      if (p) map.set(c.pod, { pod: p.pod, wave: p.wave, step: c.step, since: p.since, stepAt: c.at });
      return;
    }
    case 'end':
      map.delete(c.pod);
  }
}
