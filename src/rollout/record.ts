// The rollout record: what a person (or a later run) can learn about a plan's rollout from the
// cluster alone. It lives in the ConfigMap `kwave-<plan>` in the plan's first target namespace.
// This file is pure: the record's shape, a reducer that folds the runner's events into it, and
// the encoding to and from ConfigMap data. Reading and writing the ConfigMap is recordStore.ts.
//
// Keys of the ConfigMap's data (one writer per key, so writers never overwrite each other):
//   plan.yaml        the plan text the runner was started with          (runner)
//   status.json      the record below, without plan text and approvals  (runner)
//   approval.wave-N  {"by", "at", "revision"} for wave N's approval gate   (`kwave approve`)
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Direction } from '../inplace/state.js';
import type { RolloutEvent, RolloutPhase, WaveSummary } from './events.js';
import { countedAs, emptyCounts, isFailure, movePod, POD_STATES, type PodCounts } from './podEnd.js';

export const RECORD_SCHEMA = 'kwave.dev/rollout-record/v1';
export const PLAN_KEY = 'plan.yaml';
export const STATUS_KEY = 'status.json';
export const APPROVAL_KEY_PREFIX = 'approval.wave-';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const PLAN_LABEL = 'kwave.dev/plan';

/** Bounds that keep the record far below a ConfigMap's 1 MiB, whatever the fleet size. */
export const LIMITS = { history: 100, failures: 50, gates: 50, measurements: 20, waveSummaries: 1000 } as const;


export interface InFlightPod {
  /** `namespace/name`, as the runner names pods in events. */
  pod: string;
  wave: number;
  /** The last step the runner reported (`pod-step`), or `started`. */
  step: string;
  /** ISO time the pod started. */
  since: string;
  /** ISO time of the last step change. */
  stepAt: string;
}

export interface Failure {
  pod: string;
  wave: number;
  reason: string;
  message: string;
  at: string;
}

export type GateResult = 'running' | 'waiting-approval' | 'passed' | 'failed' | 'inconclusive' | 'interrupted';

export interface GateMeasurement {
  index: number;
  count: number;
  value: unknown;
  phase: string;
  message: string;
  at: string;
}

export interface GateRecord {
  wave: number;
  gate: string;
  result: GateResult;
  message: string;
  /** ISO time of the gate's start, then of its end. */
  at: string;
  measurements?: GateMeasurement[];
}

/** What the rollout waits for between waves, if anything. */
export interface Waiting {
  kind: 'pause' | 'approval' | 'window';
  wave: number;
  gate?: string;
  /** ISO time the wait began. */
  since: string;
  /** ISO time the pause ends or the window opens; absent for approvals. */
  until?: string;
}

export interface Approval {
  /** Who approved: `user@host`. */
  by: string;
  /** ISO time. */
  at: string;
  /** The plan revision the approval was given for, when known. */
  revision?: string;
}

export interface HistoryEntry {
  time: string;
  event: RolloutEvent['event'];
  message: string;
}

/** Pods reverted after a halt (`rollback: failed | all`), kept apart from the counts. */
export interface RollbackProgress {
  scope: 'failed' | 'all';
  pods: number;
  done: number;
  failed: number;
}

export interface RolloutRecord {
  plan: string;
  revision: string;
  /** The plan file's text: stored under its own key, not in status.json. */
  planText: string;
  phase: RolloutPhase;
  direction: Direction;
  /** Current wave, 1-based; 0 before the first. */
  wave: number;
  waves: number;
  selected: number;
  /** Pods selected but beyond the last wave's target (a partial plan). */
  deferred: number;
  counts: PodCounts;
  inFlight: InFlightPod[];
  failures: Failure[];
  /** Failures in all, including those dropped from the bounded list. */
  failuresTotal: number;
  gates: GateRecord[];
  waiting?: Waiting;
  rollback?: RollbackProgress;
  /** Approvals by wave: read from their own keys, never written by the runner. */
  approvals: Record<number, Approval>;
  waveSummaries: WaveSummary[];
  history: HistoryEntry[];
  /** The last message that explains the phase (halt reason, final summary). */
  message?: string;
  exitCode?: number;
  startedAt: string;
  updatedAt: string;
  endedAt?: string;
  /** Identity of the runner that wrote the record (`user@host pid N`). */
  holder: string;
}

/** The ConfigMap name of a plan's record (and of its lease). */
export function recordName(plan: string): string {
  return `kwave-${plan}`;
}

export interface NewRecordInput {
  plan: string;
  revision: string;
  planText: string;
  holder: string;
  /** ISO time. */
  now: string;
  direction?: Direction;
}

/** A record before the first event: phase Pending, wave 0. */
export function newRecord(input: NewRecordInput): RolloutRecord {
  return {
    plan: input.plan,
    revision: input.revision,
    planText: input.planText,
    phase: 'Pending',
    direction: input.direction ?? 'upgrade',
    wave: 0,
    waves: 0,
    selected: 0,
    deferred: 0,
    counts: emptyCounts(),
    inFlight: [],
    failures: [],
    failuresTotal: 0,
    gates: [],
    approvals: {},
    waveSummaries: [],
    history: [],
    startedAt: input.now,
    updatedAt: input.now,
    holder: input.holder,
  };
}

/**
 * The record a run starts from. Same revision as the stored record: that record, continued
 * (a resume keeps its gates, failures and history; `rollout-start` resets counts and pods in
 * flight). Another revision, or none stored: a new record that keeps only the history.
 */
export function startRecord(previous: RolloutRecord | undefined, input: NewRecordInput): RolloutRecord {
  if (previous && previous.revision === input.revision && previous.plan === input.plan) {
    return { ...previous, planText: input.planText, holder: input.holder, updatedAt: input.now };
  }
  const fresh = newRecord(input);
  return previous ? { ...fresh, history: previous.history } : fresh;
}

// ---- the reducer -------------------------------------------------------------------------------

/** Events worth flushing at once (phase, wave and gate transitions); pod events are throttled. */
export function isTransition(event: RolloutEvent): boolean {
  switch (event.event) {
    case 'pod-start':
    case 'pod-step':
    case 'budget-wait':
    case 'gate-measurement':
      return false;
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
    case 'wave-end':
      return `wave ${e.wave} ended: ${e.summary.upgraded} upgraded, ${e.summary.failed} failed, ${e.summary.vanished} vanished of ${e.summary.pods}`;
    case 'gate-start':
      return `gate ${e.gate} after wave ${e.wave} started`;
    case 'gate-pause':
      return `gate ${e.gate}: pausing ${Math.ceil(e.msLeft / 1000)}s`;
    case 'gate-approval-wait':
      return `gate ${e.gate}: waiting for approval of wave ${e.wave} (kwave approve PLAN_FILE --wave ${e.wave})`;
    case 'gate-measurement':
      return `gate ${e.gate}: measurement ${e.index} of ${e.count}: ${e.message}`;
    case 'gate-end':
      return `gate ${e.gate} ${e.result}${e.message ? `: ${e.message}` : ''}`;
    case 'window-wait':
      return `waiting for the window: opens at ${e.opensAt}`;
    case 'halt':
      return `halted (${e.reason}): ${e.message}`;
    case 'rollback-start':
      return `rolling back ${e.pods} pod${e.pods === 1 ? '' : 's'} (${e.scope})`;
    case 'interrupt':
      return e.message;
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
  return { ...record, history: keepLast([...record.history, { time: e.time, event: e.event, message: describeEvent(e) }], LIMITS.history) };
}

/** Updates the newest gate entry of (wave, gate), or appends one. */
function upsertGate(gates: GateRecord[], wave: number, gate: string, change: (g: GateRecord | undefined) => GateRecord): GateRecord[] {
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

/** The body of the reducer, before history and updatedAt. */
function fold(r: RolloutRecord, e: RolloutEvent): RolloutRecord {
  switch (e.event) {
    case 'rollout-start': {
      const todo = Math.max(0, e.selected - e.alreadyDone - e.deferred);
      return {
        ...r,
        revision: e.revision,
        direction: e.direction,
        phase: 'Progressing',
        waves: e.waves,
        selected: e.selected,
        deferred: e.deferred,
        counts: { ...emptyCounts(), pending: todo, skipped: e.alreadyDone },
        inFlight: [],
        waiting: undefined,
        rollback: undefined,
        message: undefined,
        exitCode: undefined,
        endedAt: undefined,
        startedAt: e.time,
      };
    }
    case 'wave-start':
      return { ...r, wave: e.wave, waves: e.waves, waiting: undefined };
    case 'pod-start': {
      const entry: InFlightPod = { pod: e.pod, wave: e.wave, step: 'started', since: e.time, stepAt: e.time };
      const inFlight = [...r.inFlight.filter((p) => p.pod !== e.pod), entry];
      if (r.rollback) return { ...r, inFlight };
      return { ...r, inFlight, counts: movePod(r.counts, 'pending', 'in_progress') };
    }
    case 'pod-step':
      return { ...r, inFlight: r.inFlight.map((p) => (p.pod === e.pod ? { ...p, step: e.step, stepAt: e.time } : p)) };
    case 'pod-end': {
      const inFlight = r.inFlight.filter((p) => p.pod !== e.pod);
      const failed = isFailure(e.result);
      const failures = failed
        ? keepLast([...r.failures, { pod: e.pod, wave: e.wave, reason: e.reason ?? 'Failed', message: e.message, at: e.time }], LIMITS.failures)
        : r.failures;
      const failuresTotal = r.failuresTotal + (failed ? 1 : 0);
      if (r.rollback) {
        const done = r.rollback.done + (e.result === 'rolled-back' ? 1 : 0);
        return { ...r, inFlight, failures, failuresTotal, rollback: { ...r.rollback, done, failed: r.rollback.failed + (failed ? 1 : 0) } };
      }
      return { ...r, inFlight, failures, failuresTotal, counts: movePod(r.counts, 'in_progress', countedAs(e.result)) };
    }
    case 'budget-wait':
      return r;
    case 'wave-end': {
      const others = r.waveSummaries.filter((s) => s.wave !== e.wave);
      return { ...r, waveSummaries: keepLast([...others, e.summary].sort((a, b) => a.wave - b.wave), LIMITS.waveSummaries) };
    }
    case 'gate-start':
      return {
        ...r,
        gates: keepLast([...r.gates, { wave: e.wave, gate: e.gate, result: 'running', message: '', at: e.time }], LIMITS.gates),
      };
    case 'gate-pause':
      return {
        ...r,
        gates: upsertGate(r.gates, e.wave, e.gate, (g) => g ?? { wave: e.wave, gate: e.gate, result: 'running', message: '', at: e.time }),
        waiting: {
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
        gates: upsertGate(r.gates, e.wave, e.gate, (g) => ({ ...(g ?? { wave: e.wave, gate: e.gate, at: e.time }), result: 'waiting-approval', message: 'waiting for approval' })),
        waiting: { kind: 'approval', wave: e.wave, gate: e.gate, since: e.time },
      };
    case 'gate-measurement': {
      const m: GateMeasurement = { index: e.index, count: e.count, value: e.value, phase: e.phase, message: e.message, at: e.time };
      return {
        ...r,
        gates: upsertGate(r.gates, e.wave, e.gate, (g) => {
          const base = g ?? { wave: e.wave, gate: e.gate, result: 'running' as const, message: '', at: e.time };
          return { ...base, measurements: keepLast([...(base.measurements ?? []), m], LIMITS.measurements) };
        }),
      };
    }
    case 'gate-end':
      return {
        ...r,
        gates: upsertGate(r.gates, e.wave, e.gate, (g) => ({ ...(g ?? { wave: e.wave, gate: e.gate }), result: e.result, message: e.message, at: e.time })),
        waiting: isOwnWait(r.waiting, e.wave, e.gate) ? undefined : r.waiting,
      };
    case 'window-wait':
      return {
        ...r,
        waiting: { kind: 'window', wave: e.wave, since: r.waiting?.kind === 'window' ? r.waiting.since : e.time, until: e.opensAt },
      };
    case 'halt':
      return { ...r, phase: 'Halted', message: e.message, waiting: undefined };
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
  const next = withHistory(fold(record, event), event);
  return { ...next, updatedAt: event.time };
}

// ---- encoding -----------------------------------------------------------------------------------

/** status.json: the record without the plan text and approvals, which have keys of their own. */
type StatusDoc = Omit<RolloutRecord, 'planText' | 'approvals'> & { schema: typeof RECORD_SCHEMA };

export function approvalKey(wave: number): string {
  return `${APPROVAL_KEY_PREFIX}${wave}`;
}

export function encodeApproval(approval: Approval): string {
  return JSON.stringify(approval);
}

/** The record's own data keys (the runner's); approval keys are left to `kwave approve`. */
export function encodeRecordData(record: RolloutRecord): Record<string, string> {
  const { planText, approvals: _approvals, ...rest } = record;
  const doc: StatusDoc = { schema: RECORD_SCHEMA, ...rest };
  return { [PLAN_KEY]: planText, [STATUS_KEY]: JSON.stringify(doc) };
}

export function recordLabels(plan: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: 'kwave', [PLAN_LABEL]: plan };
}

/** A new ConfigMap holding the record (for create). */
export function recordConfigMap(namespace: string, record: RolloutRecord): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: recordName(record.plan), namespace, labels: recordLabels(record.plan) },
    data: encodeRecordData(record),
  };
}

export type DecodedRecord =
  | { ok: true; record: RolloutRecord; resourceVersion?: string }
  /** The ConfigMap exists but its status.json is missing or damaged: `problem` says how. */
  | { ok: false; problem: string; planText?: string; approvals: Record<number, Approval>; resourceVersion?: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const PHASES: readonly RolloutPhase[] = ['Pending', 'Progressing', 'Paused', 'Halted', 'Completed', 'Partial', 'RolledBack'];

/** Reads approval keys; a malformed one is skipped (it cannot count as an approval). */
export function decodeApprovals(data: Record<string, string>): Record<number, Approval> {
  const out: Record<number, Approval> = {};
  for (const [key, value] of Object.entries(data)) {
    if (!key.startsWith(APPROVAL_KEY_PREFIX)) continue;
    const wave = Number(key.slice(APPROVAL_KEY_PREFIX.length));
    if (!Number.isInteger(wave) || wave < 1) continue;
    const parsed = parseJson(value);
    if (!isObject(parsed) || !isString(parsed.by) || !isString(parsed.at)) continue;
    out[wave] = { by: parsed.by, at: parsed.at, ...(isString(parsed.revision) ? { revision: parsed.revision } : {}) };
  }
  return out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const arrayOf = <T>(v: unknown, ok: (x: unknown) => x is T): T[] | undefined => (Array.isArray(v) && v.every(ok) ? v : undefined);

const isInFlight = (v: unknown): v is InFlightPod => isObject(v) && isString(v.pod) && isCount(v.wave) && isString(v.step) && isString(v.since);
const isFailureEntry = (v: unknown): v is Failure => isObject(v) && isString(v.pod) && isCount(v.wave) && isString(v.reason) && isString(v.message) && isString(v.at);
const isGate = (v: unknown): v is GateRecord => isObject(v) && isCount(v.wave) && isString(v.gate) && isString(v.result) && isString(v.at);
const isHistory = (v: unknown): v is HistoryEntry => isObject(v) && isString(v.time) && isString(v.event) && isString(v.message);
const isSummary = (v: unknown): v is WaveSummary => isObject(v) && isCount(v.wave) && isCount(v.pods) && isCount(v.upgraded) && isCount(v.failed) && isCount(v.vanished);

/** Checks status.json field by field; returns the first thing wrong, or the record. */
function validateStatus(doc: unknown): { ok: true; value: Omit<RolloutRecord, 'planText' | 'approvals'> } | { ok: false; problem: string } {
  const bad = (field: string, expected: string) => ({ ok: false as const, problem: `status.json: ${field} is not ${expected}` });
  if (!isObject(doc)) return bad('the document', 'a JSON object');
  if (doc.schema !== RECORD_SCHEMA) return bad('schema', `"${RECORD_SCHEMA}" (found ${JSON.stringify(doc.schema)})`);
  for (const f of ['plan', 'revision', 'startedAt', 'updatedAt', 'holder'] as const) if (!isString(doc[f])) return bad(f, 'a string');
  if (!PHASES.includes(doc.phase as RolloutPhase)) return bad('phase', `one of ${PHASES.join(', ')}`);
  if (doc.direction !== 'upgrade' && doc.direction !== 'rollback') return bad('direction', 'upgrade or rollback');
  for (const f of ['wave', 'waves', 'selected', 'deferred', 'failuresTotal'] as const) if (!isCount(doc[f])) return bad(f, 'a count');
  const counts = doc.counts;
  if (!isObject(counts) || !POD_STATES.every((s) => isCount(counts[s]))) return bad('counts', `an object of counts (${POD_STATES.join(', ')})`);
  if (!arrayOf(doc.inFlight, isInFlight)) return bad('inFlight', 'a list of {pod, wave, step, since}');
  if (!arrayOf(doc.failures, isFailureEntry)) return bad('failures', 'a list of {pod, wave, reason, message, at}');
  if (!arrayOf(doc.gates, isGate)) return bad('gates', 'a list of {wave, gate, result, at}');
  if (!arrayOf(doc.history, isHistory)) return bad('history', 'a list of {time, event, message}');
  if (!arrayOf(doc.waveSummaries, isSummary)) return bad('waveSummaries', 'a list of wave summaries');
  if (doc.waiting !== undefined) {
    const w = doc.waiting;
    if (!isObject(w) || !['pause', 'approval', 'window'].includes(w.kind as string) || !isCount(w.wave) || !isString(w.since)) {
      return bad('waiting', 'a {kind, wave, since} object');
    }
  }
  if (doc.rollback !== undefined) {
    const rb = doc.rollback;
    if (!isObject(rb) || !isCount(rb.pods) || !isCount(rb.done) || !isCount(rb.failed)) return bad('rollback', 'a {scope, pods, done, failed} object');
  }
  const { schema: _schema, ...value } = doc;
  return { ok: true, value: value as unknown as Omit<RolloutRecord, 'planText' | 'approvals'> };
}

/** Decodes a record ConfigMap; a damaged one is reported as data, never thrown. */
export function decodeRecord(cm: V1ConfigMap): DecodedRecord {
  const data = cm.data ?? {};
  const resourceVersion = cm.metadata?.resourceVersion;
  const approvals = decodeApprovals(data);
  const planText = data[PLAN_KEY];
  const rv = resourceVersion === undefined ? {} : { resourceVersion };
  const damaged = (problem: string): DecodedRecord => ({ ok: false, problem, approvals, ...(planText === undefined ? {} : { planText }), ...rv });
  const text = data[STATUS_KEY];
  if (text === undefined) return damaged(`the ConfigMap has no ${STATUS_KEY} key`);
  const doc = parseJson(text);
  if (doc === undefined) return damaged(`${STATUS_KEY} is not valid JSON`);
  const checked = validateStatus(doc);
  if (!checked.ok) return damaged(checked.problem);
  return { ok: true, record: { ...checked.value, planText: planText ?? '', approvals }, ...rv };
}
