// Folds the runner's events into the rollout record (record.ts). Pure.
import { formatDuration } from '../durationText.js';
import type { NodeWait, RolloutEvent } from '../rollout/events.js';
import { countedAs, emptyCounts, isFailure, movePod } from '../rollout/podEnd.js';
import {
  LIMITS,
  type GateMeasurement,
  type GateRecord,
  type HistoryEntry,
  type InFlightPod,
  type RolloutRecord,
  type Waiting,
} from './record.js';

/** Events worth flushing at once (phase, wave and gate transitions); pod events are throttled. */
export function isTransition(event: RolloutEvent): boolean {
  switch (event.event) {
    case 'pod-start':
    case 'pod-step':
    case 'budget-wait':
    case 'gate-measurement':
      return false;
    case 'pod-waiting':
    case 'pdb-wait':
      return true;
    case 'gate-pause':
      // The runner may repeat it as a countdown; only the first of a pause is a transition.
      return true;
    case 'pod-end':
      return event.result === 'failed' || event.result === 'vanished';
    default:
      return true;
  }
}

const keepLast = <T>(list: T[], n: number): T[] => (list.length > n ? list.slice(list.length - n) : list);

function withoutPod(list: NodeWait[] | undefined, pod: string): NodeWait[] | undefined {
  const rest = list?.filter((w) => w.pod !== pod);
  return rest && rest.length > 0 ? rest : undefined;
}

function describeEvent(e: RolloutEvent): string {
  switch (e.event) {
    case 'rollout-start':
      return `${e.resumed ? 'resumed' : 'started'} ${e.direction} of revision ${e.revision}: ${e.selected} pods selected, ${e.alreadyDone} already done, ${e.waves} waves`;
    case 'wave-start':
      return `wave ${e.wave} of ${e.waves} started: ${e.pods} pod${e.pods === 1 ? '' : 's'} (target ${e.target})`;
    case 'pod-start':
      return `${e.pod} started`;
    case 'pod-step':
      return `${e.pod}: ${e.step}${e.message ? ` (${e.message})` : ''}`;
    case 'pod-end':
      return `${e.pod} ${e.result}${e.reason ? ` (${e.reason})` : ''}${e.message ? `: ${e.message}` : ''}`;
    case 'budget-wait':
      return `waiting for the unavailability budget: ${e.unavailable} of ${e.budget} not Ready`;
    case 'pod-waiting':
      return `${e.pod} waiting: ${e.message}`;
    case 'pdb-wait':
      return `${e.pod} held by ${e.message}`;
    case 'prepull-start':
      return `wave ${e.wave}: pre-pulling the target images on the nodes of ${e.pods} pod${e.pods === 1 ? '' : 's'}`;
    case 'prepull-end':
      return e.ok
        ? `wave ${e.wave}: images pulled on ${e.pulled.length} node${e.pulled.length === 1 ? '' : 's'} (${e.skipped.length} had them)`
        : `wave ${e.wave}: ${e.message ?? 'pre-pull failed'}`;
    case 'wave-end':
      return `wave ${e.wave} ended: ${e.summary.upgraded} upgraded, ${e.summary.failed} failed, ${e.summary.vanished} vanished of ${e.summary.pods}`;
    case 'gate-start':
      return `gate ${e.gate} after wave ${e.wave} started`;
    case 'gate-pause':
      return `gate ${e.gate}: pausing ${formatDuration(e.msLeft)}`;
    case 'gate-approval-wait':
      return `gate ${e.gate}: waiting for approval of wave ${e.wave} (kwave approve PLAN_FILE --wave ${e.wave})`;
    case 'gate-measurement':
      return `gate ${e.gate}: measurement ${e.index} of ${e.count}: ${e.message}`;
    case 'gate-end':
      return `gate ${e.gate} ${e.result}${e.wouldHave ? ' (dry run)' : ''}${e.message ? `: ${e.message}` : ''}`;
    case 'window-wait':
      return `waiting for the window: opens at ${e.opensAt}`;
    case 'halt':
      return `halted (${e.reason}): ${e.message}`;
    case 'rollback-start':
      return `rolling back ${e.pods} pod${e.pods === 1 ? '' : 's'} (${e.scope})`;
    case 'interrupt':
      return e.message;
    case 'paused':
      return `paused by ${e.by} (kwave pause at ${e.at}): no new pod starts; ${e.inFlight} pod${e.inFlight === 1 ? '' : 's'} in flight finish${e.inFlight === 1 ? 'es' : ''}`;
    case 'resumed':
      return `resumed by ${e.by} (kwave resume at ${e.at})`;
    case 'rollout-end':
      return `${e.phase}: ${e.message}`;
  }
}

/** Pod progress and budget waits would drown the history; failures and transitions stay. */
function historyWorthy(e: RolloutEvent, last: HistoryEntry | undefined): boolean {
  switch (e.event) {
    case 'pod-start':
    case 'pod-step':
    case 'gate-measurement':
      return false;
    case 'pod-end':
      return e.result !== 'upgraded' && e.result !== 'skipped' && e.result !== 'rolled-back';
    case 'budget-wait':
    case 'pdb-wait':
    case 'gate-pause':
    case 'window-wait':
      // Repeated countdowns: one line per wait.
      return last?.event !== e.event;
    default:
      return true;
  }
}

function withHistory(record: RolloutRecord, e: RolloutEvent): RolloutRecord {
  const last = record.history[record.history.length - 1];
  if (!historyWorthy(e, last)) return record;
  return {
    ...record,
    history: keepLast([...record.history, { time: e.time, event: e.event, message: describeEvent(e) }], LIMITS.history),
  };
}

/** Updates the newest gate entry of (wave, gate), or appends one. */
function upsertGate(
  gates: GateRecord[],
  wave: number,
  gate: string,
  change: (g: GateRecord | undefined) => GateRecord,
): GateRecord[] {
  for (let i = gates.length - 1; i >= 0; i--) {
    const g = gates[i]!;
    if (g.wave === wave && g.gate === gate) return gates.map((x, j) => (j === i ? change(x) : x));
  }
  return keepLast([...gates, change(undefined)], LIMITS.gates);
}

const addMs = (iso: string, ms: number): string => new Date(Date.parse(iso) + Math.max(0, ms)).toISOString();

function isOwnWait(waiting: Waiting | undefined, wave: number, gate: string): boolean {
  return waiting !== undefined && waiting.wave === wave && waiting.gate === gate;
}

/** A `kwave pause` outranks the waits of gates and windows: it is what a person must act on (the gates list still shows the gate). */
const keepPaused = (w: Waiting | undefined): Waiting | undefined => (w?.kind === 'paused' ? w : undefined);

/** The body of the reducer, before history, updatedAt and the pods in flight (inFlightChange). */
function fold(r: RolloutRecord, e: RolloutEvent): RolloutRecord {
  switch (e.event) {
    case 'rollout-start': {
      const todo = Math.max(0, e.selected - e.alreadyDone - e.deferred);
      return {
        ...r,
        revision: e.revision,
        direction: e.direction,
        // Carrying on a halt a killed run left: the record says Halted from its first write on,
        // so a run killed again is resumed as that halt too.
        phase: e.halted !== undefined ? 'Halted' : 'Progressing',
        waves: e.waves,
        selected: e.selected,
        deferred: e.deferred,
        counts: { ...emptyCounts(), pending: todo, skipped: e.alreadyDone },
        waitingForNodes: undefined,
        waiting: undefined,
        rollback: undefined,
        message: e.halted,
        exitCode: undefined,
        endedAt: undefined,
        startedAt: e.time,
      };
    }
    case 'wave-start':
      return { ...r, wave: e.wave, waves: e.waves, waiting: undefined };
    case 'pod-start': {
      const waitingForNodes = withoutPod(r.waitingForNodes, e.pod);
      const heldByPdb = r.heldByPdb?.pod === e.pod ? undefined : r.heldByPdb;
      if (r.rollback) return { ...r, waitingForNodes, heldByPdb };
      return { ...r, waitingForNodes, heldByPdb, counts: movePod(r.counts, 'pending', 'in_progress') };
    }
    case 'pod-waiting': {
      const entry: NodeWait = { pod: e.pod, node: e.node, ...(e.since ? { since: e.since } : {}), message: e.message };
      return {
        ...r,
        waitingForNodes: keepLast([...(withoutPod(r.waitingForNodes, e.pod) ?? []), entry], LIMITS.failures),
      };
    }
    case 'pod-step':
      return r;
    case 'pod-end': {
      const failed = isFailure(e.result);
      const failures = failed
        ? keepLast(
            [...r.failures, { pod: e.pod, wave: e.wave, reason: e.reason ?? 'Failed', message: e.message, at: e.time }],
            LIMITS.failures,
          )
        : r.failures;
      const failuresTotal = r.failuresTotal + (failed ? 1 : 0);
      if (r.rollback) {
        // Back on its recorded image with its gate open: reverted, or found never patched (a pod
        // the upgrade drained and stopped before its patch, whose gate the rollback reopened).
        const done = r.rollback.done + (e.result === 'rolled-back' || e.result === 'skipped' ? 1 : 0);
        return {
          ...r,
          failures,
          failuresTotal,
          rollback: { ...r.rollback, done, failed: r.rollback.failed + (failed ? 1 : 0) },
        };
      }
      return { ...r, failures, failuresTotal, counts: movePod(r.counts, 'in_progress', countedAs(e.result)) };
    }
    case 'budget-wait':
      return r;
    case 'prepull-start':
    case 'prepull-end':
      return r;
    case 'pdb-wait':
      return {
        ...r,
        heldByPdb: {
          pod: e.pod,
          pdb: e.pdb,
          message: e.message,
          since: r.heldByPdb?.pdb === e.pdb ? r.heldByPdb.since : e.time,
        },
      };
    case 'wave-end': {
      const others = r.waveSummaries.filter((s) => s.wave !== e.wave);
      return {
        ...r,
        heldByPdb: undefined,
        waveSummaries: keepLast(
          [...others, e.summary].sort((a, b) => a.wave - b.wave),
          LIMITS.waveSummaries,
        ),
      };
    }
    case 'gate-start':
      return {
        ...r,
        gates: keepLast(
          [...r.gates, { wave: e.wave, gate: e.gate, result: 'running', message: '', at: e.time }],
          LIMITS.gates,
        ),
      };
    case 'gate-pause':
      return {
        ...r,
        gates: upsertGate(
          r.gates,
          e.wave,
          e.gate,
          (g) => g ?? { wave: e.wave, gate: e.gate, result: 'running', message: '', at: e.time },
        ),
        waiting: keepPaused(r.waiting) ?? {
          kind: 'pause',
          wave: e.wave,
          gate: e.gate,
          since: r.waiting?.kind === 'pause' && isOwnWait(r.waiting, e.wave, e.gate) ? r.waiting.since : e.time,
          until: addMs(e.time, e.msLeft),
        },
      };
    case 'gate-approval-wait':
      return {
        ...r,
        gates: upsertGate(r.gates, e.wave, e.gate, (g) => ({
          ...(g ?? { wave: e.wave, gate: e.gate, at: e.time }),
          result: 'waiting-approval',
          message: 'waiting for approval',
        })),
        waiting: keepPaused(r.waiting) ?? { kind: 'approval', wave: e.wave, gate: e.gate, since: e.time },
      };
    case 'gate-measurement': {
      const m: GateMeasurement = {
        index: e.index,
        count: e.count,
        value: e.value,
        phase: e.phase,
        message: e.message,
        at: e.time,
      };
      return {
        ...r,
        gates: upsertGate(r.gates, e.wave, e.gate, (g) => {
          const base = g ?? { wave: e.wave, gate: e.gate, result: 'running' as const, message: '', at: e.time };
          return {
            ...base,
            ...(e.dryRun ? { dryRun: true } : {}),
            measurements: keepLast([...(base.measurements ?? []), m], LIMITS.measurements),
          };
        }),
      };
    }
    case 'gate-end':
      return {
        ...r,
        gates: upsertGate(r.gates, e.wave, e.gate, (g) => ({
          ...(g ?? { wave: e.wave, gate: e.gate }),
          result: e.result,
          message: e.message,
          at: e.time,
          ...(e.wouldHave ? { wouldHave: e.wouldHave } : {}),
        })),
        waiting: isOwnWait(r.waiting, e.wave, e.gate) ? undefined : r.waiting,
      };
    case 'window-wait':
      return {
        ...r,
        waiting: keepPaused(r.waiting) ?? {
          kind: 'window',
          wave: e.wave,
          since: r.waiting?.kind === 'window' ? r.waiting.since : e.time,
          until: e.opensAt,
        },
      };
    case 'halt':
      return { ...r, phase: 'Halted', message: e.message, waiting: undefined };
    case 'paused':
      return {
        ...r,
        phase: 'Paused',
        message: describeEvent(e),
        waiting: { kind: 'paused', wave: e.wave, since: e.time, by: e.by },
      };
    case 'resumed':
      return {
        ...r,
        phase: 'Progressing',
        message: undefined,
        waiting: r.waiting?.kind === 'paused' ? undefined : r.waiting,
      };
    case 'rollback-start':
      return { ...r, rollback: { scope: e.scope, pods: e.pods, done: 0, failed: 0 } };
    case 'interrupt':
      return { ...r, message: e.message };
    case 'rollout-end':
      return {
        ...r,
        phase: e.phase,
        exitCode: e.exitCode,
        message: e.message,
        waveSummaries: e.waves.length > 0 ? keepLast(e.waves, LIMITS.waveSummaries) : r.waveSummaries,
        waiting: undefined,
        heldByPdb: undefined,
        waitingForNodes:
          e.waitingForNodes && e.waitingForNodes.length > 0 ? keepLast(e.waitingForNodes, LIMITS.failures) : undefined,
        endedAt: e.time,
      };
  }
}

/**
 * Folds one of the runner's events into the record: counts, wave, phase, pods in flight,
 * failures, gates, waits and the bounded history. Pure; the input is not changed.
 *
 * Counts: `rollout-start` sets pending = selected − alreadyDone − deferred and skipped =
 * alreadyDone; `pod-start` moves a pod from pending to in_progress; `pod-end` moves it on by its
 * result (`aborted` returns it to pending). Pods reverted after a halt are counted in `rollback`,
 * not in the counts, so the counts still say what the upgrade did.
 */
export function applyEvent(record: RolloutRecord, event: RolloutEvent): RolloutRecord {
  return {
    ...foldBesidesInFlight(record, event),
    updatedAt: event.time,
    inFlight: changedList(record.inFlight, inFlightChange(event)),
  };
}

/**
 * applyEvent but for the pods in flight and `updatedAt` (both left as they were), for a folder that
 * keeps those its own way (recordFolder.ts): the record itself when the event changes nothing else (a pod's step).
 */
export function foldBesidesInFlight(record: RolloutRecord, event: RolloutEvent): RolloutRecord {
  return withHistory(fold(record, event), event);
}

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
function changedList(list: InFlightPod[], c: InFlightChange | undefined): InFlightPod[] {
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
      const p = map.get(c.pod);
      if (p) map.set(c.pod, { ...p, step: c.step, stepAt: c.at });
      return;
    }
    case 'end':
      map.delete(c.pod);
  }
}
