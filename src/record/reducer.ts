// Folds the runner's events into the rollout record (record.ts). Pure. The pod counts are the
// one fold of rollout/podCounts.ts; the history and the pods in flight have files of their own.
import type { NodeWait, RolloutEvent } from '../rollout/events.js';
import { countPods, type PodCountState } from '../rollout/podCounts.js';
import { isFailure } from '../rollout/podEnd.js';
import { boundedValue, clip } from './bounds.js';
import { describeEvent, withHistory } from './history.js';
import { changedList, inFlightChange } from './inFlight.js';
import { keepLast, LIMITS, type GateMeasurement, type GateRecord, type RolloutRecord, type Waiting } from './record.js';

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

/** Measurements come twenty to a gate: their messages are kept shorter than others. */
const MEASUREMENT_MESSAGE_CHARS = 200;

const boundedWait = (w: NodeWait): NodeWait => ({ ...w, message: clip(w.message) });

function withoutPod(list: NodeWait[] | undefined, pod: string): NodeWait[] | undefined {
  const rest = list?.filter((w) => w.pod !== pod);
  return rest && rest.length > 0 ? rest : undefined;
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

/** What the pod count (rollout/podCounts.ts) needs of the record: all of it is there. */
const podCountStateOf = (r: RolloutRecord): PodCountState => ({
  counts: r.counts,
  direction: r.direction,
  ...(r.rollback ? { rollback: r.rollback.scope } : {}),
});

/** The reducer but for history, updatedAt and the pods in flight: the counts, then the rest. */
function fold(r: RolloutRecord, e: RolloutEvent): RolloutRecord {
  const counts = countPods(podCountStateOf(r), e).counts;
  const next = foldBesidesCounts(r, e);
  return counts === r.counts ? next : { ...next, counts };
}

function foldBesidesCounts(r: RolloutRecord, e: RolloutEvent): RolloutRecord {
  switch (e.event) {
    case 'rollout-start': {
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
      return { ...r, waitingForNodes, heldByPdb };
    }
    case 'pod-waiting': {
      const entry = boundedWait({
        pod: e.pod,
        node: e.node,
        ...(e.since ? { since: e.since } : {}),
        message: e.message,
      });
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
            [
              ...r.failures,
              { pod: e.pod, wave: e.wave, reason: clip(e.reason ?? 'Failed'), message: clip(e.message), at: e.time },
            ],
            LIMITS.failures,
          )
        : r.failures;
      const failuresTotal = r.failuresTotal + (failed ? 1 : 0);
      if (!r.rollback) return { ...r, failures, failuresTotal };
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
          message: clip(e.message),
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
        ...boundedValue(e.value),
        phase: e.phase,
        message: clip(e.message, MEASUREMENT_MESSAGE_CHARS),
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
          message: clip(e.message),
          at: e.time,
          ...(e.wouldHave ? { wouldHave: { ...e.wouldHave, message: clip(e.wouldHave.message) } } : {}),
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
      return { ...r, phase: 'Halted', message: clip(e.message), waiting: undefined };
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
      return { ...r, message: clip(e.message) };
    case 'rollout-end':
      return {
        ...r,
        phase: e.phase,
        exitCode: e.exitCode,
        message: clip(e.message),
        waveSummaries: e.waves.length > 0 ? keepLast(e.waves, LIMITS.waveSummaries) : r.waveSummaries,
        waiting: undefined,
        heldByPdb: undefined,
        waitingForNodes:
          e.waitingForNodes && e.waitingForNodes.length > 0
            ? keepLast(e.waitingForNodes, LIMITS.failures).map(boundedWait)
            : undefined,
        endedAt: e.time,
      };
  }
}

/**
 * Folds one of the runner's events into the record: counts, wave, phase, pods in flight,
 * failures, gates, waits and the bounded history. Pure; the input is not changed.
 *
 * Counts: the one count of rollout/podCounts.ts (countPods); the reverts of a rollback after a
 * halt are counted in `rollback` besides.
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
