// The rollout record (record.ts) to and from the data of its ConfigMap, validating what it reads:
// a damaged record is reported, never trusted. Pure.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { ROLLOUT_PHASES, type NodeWait, type WaveSummary } from '../rollout/events.js';
import { POD_STATES } from '../rollout/podCounts.js';
import { byteSize, CONFIGMAP_DATA_LIMIT, fitRecord, RECORD_MARGIN_BYTES } from './bounds.js';
import { CONTROL_KEY, decodeControl } from './control.js';
import {
  APPROVAL_KEY_PREFIX,
  MANAGED_BY_LABEL,
  PLAN_KEY,
  PLAN_LABEL,
  RECORD_SCHEMA,
  recordName,
  STATUS_KEY,
  type Approval,
  type Failure,
  type GateRecord,
  type HistoryEntry,
  type InFlightPod,
  type RolloutRecord,
} from './record.js';

/** status.json: the record without the plan text, approvals and control requests, which have keys of their own. */
type StatusDoc = Omit<RolloutRecord, 'planText' | 'approvals' | 'control'> & { schema: typeof RECORD_SCHEMA };

export function approvalKey(wave: number): string {
  return `${APPROVAL_KEY_PREFIX}${wave}`;
}

export function encodeApproval(approval: Approval): string {
  return JSON.stringify(approval);
}

function statusJson(record: RolloutRecord): string {
  const { planText: _planText, approvals: _approvals, control: _control, ...rest } = record;
  const doc: StatusDoc = { schema: RECORD_SCHEMA, ...rest };
  return JSON.stringify(doc);
}

/** The runner's keys as written, their size (keys included), and what was left out to fit (bounds.ts). */
export type EncodedRecord =
  | { ok: true; data: Record<string, string>; bytes: number; trimmed: string[] }
  | { ok: false; bytes: number; trimmed: string[] };

/**
 * The record's own data keys (the runner's), fitted into the ConfigMap beside `othersBytes` of the
 * other writers' keys (approvals, control.json): at most CONFIGMAP_DATA_LIMIT less
 * RECORD_MARGIN_BYTES in all. Not ok when the others leave too little room even for a shrunk record.
 */
export function encodeRecord(record: RolloutRecord, othersBytes = 0): EncodedRecord {
  const budget = CONFIGMAP_DATA_LIMIT - RECORD_MARGIN_BYTES - othersBytes;
  const fit = fitRecord(record, { status: statusJson, budget, statusKey: STATUS_KEY, planKey: PLAN_KEY });
  if (!fit.ok) return fit;
  return {
    ok: true,
    data: { [PLAN_KEY]: fit.planText, [STATUS_KEY]: fit.status },
    bytes: fit.bytes,
    trimmed: fit.trimmed,
  };
}

/** The bytes of a ConfigMap's data keys other than the runner's (keys included). */
export function othersBytes(data: Record<string, string> | undefined): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(data ?? {}))
    if (key !== PLAN_KEY && key !== STATUS_KEY) bytes += byteSize(key) + byteSize(value);
  return bytes;
}

/** The record's own data keys (the runner's) in a ConfigMap of their own; approval keys are left to `kwave approve`. */
export function encodeRecordData(record: RolloutRecord): Record<string, string> {
  const encoded = encodeRecord(record);
  // Alone in its ConfigMap, a record shrunk by bounds.ts always fits: not fitting is a bug.
  if (!encoded.ok) throw new Error(`the rollout record does not fit a ConfigMap even shrunk (${encoded.bytes} bytes)`);
  return encoded.data;
}

export function recordLabels(plan: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: 'kwave', [PLAN_LABEL]: plan };
}

/** A new ConfigMap holding the record (for create); `data`: its keys as encodeRecord made them. */
export function recordConfigMap(
  namespace: string,
  record: RolloutRecord,
  data: Record<string, string> = encodeRecordData(record),
): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: recordName(record.plan), namespace, labels: recordLabels(record.plan) },
    data,
  };
}

export type DecodedRecord =
  | { ok: true; record: RolloutRecord; resourceVersion?: string }
  /** The ConfigMap exists but its status.json is missing or damaged: `problem` says how. */
  | { ok: false; problem: string; planText?: string; approvals: Record<number, Approval>; resourceVersion?: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Reads approval keys; a malformed one is skipped (it cannot count as an approval). */
export function decodeApprovals(data: Record<string, string>): Record<number, Approval> {
  const out: Record<number, Approval> = {};
  for (const [key, value] of Object.entries(data)) {
    if (!key.startsWith(APPROVAL_KEY_PREFIX)) continue;
    const wave = Number(key.slice(APPROVAL_KEY_PREFIX.length));
    if (!Number.isInteger(wave) || wave < 1) continue;
    const parsed = parseJson(value);
    if (!isObject(parsed) || !isString(parsed.by) || !isString(parsed.at)) continue;
    out[wave] = {
      by: parsed.by,
      at: parsed.at,
      ...(isString(parsed.user) ? { user: parsed.user } : {}),
      ...(isString(parsed.revision) ? { revision: parsed.revision } : {}),
    };
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

const arrayOf = <T>(v: unknown, ok: (x: unknown) => x is T): T[] | undefined =>
  Array.isArray(v) && v.every(ok) ? v : undefined;

const isInFlight = (v: unknown): v is InFlightPod =>
  isObject(v) && isString(v.pod) && isCount(v.wave) && isString(v.step) && isString(v.since);
const isFailureEntry = (v: unknown): v is Failure =>
  isObject(v) && isString(v.pod) && isCount(v.wave) && isString(v.reason) && isString(v.message) && isString(v.at);
const isGate = (v: unknown): v is GateRecord =>
  isObject(v) && isCount(v.wave) && isString(v.gate) && isString(v.result) && isString(v.at);
const isHistory = (v: unknown): v is HistoryEntry =>
  isObject(v) && isString(v.time) && isString(v.event) && isString(v.message);
const isNodeWait = (v: unknown): v is NodeWait =>
  isObject(v) &&
  isString(v.pod) &&
  isString(v.node) &&
  isString(v.message) &&
  (v.since === undefined || isString(v.since));
const isSummary = (v: unknown): v is WaveSummary =>
  isObject(v) && isCount(v.wave) && isCount(v.pods) && isCount(v.upgraded) && isCount(v.failed) && isCount(v.vanished);

/** Checks status.json field by field; returns the first thing wrong, or the record. */
function validateStatus(
  doc: unknown,
): { ok: true; value: Omit<RolloutRecord, 'planText' | 'approvals' | 'control'> } | { ok: false; problem: string } {
  const bad = (field: string, expected: string) => ({
    ok: false as const,
    problem: `status.json: ${field} is not ${expected}`,
  });
  if (!isObject(doc)) return bad('the document', 'a JSON object');
  if (doc.schema !== RECORD_SCHEMA) return bad('schema', `"${RECORD_SCHEMA}" (found ${JSON.stringify(doc.schema)})`);
  for (const f of ['plan', 'revision', 'startedAt', 'updatedAt', 'holder'] as const)
    if (!isString(doc[f])) return bad(f, 'a string');
  if (!(ROLLOUT_PHASES as readonly unknown[]).includes(doc.phase))
    return bad('phase', `one of ${ROLLOUT_PHASES.join(', ')}`);
  if (doc.direction !== 'upgrade' && doc.direction !== 'rollback') return bad('direction', 'upgrade or rollback');
  for (const f of ['wave', 'waves', 'selected', 'deferred', 'failuresTotal'] as const)
    if (!isCount(doc[f])) return bad(f, 'a count');
  const counts = doc.counts;
  if (!isObject(counts) || !POD_STATES.every((s) => isCount(counts[s])))
    return bad('counts', `an object of counts (${POD_STATES.join(', ')})`);
  if (!arrayOf(doc.inFlight, isInFlight)) return bad('inFlight', 'a list of {pod, wave, step, since}');
  if (!arrayOf(doc.failures, isFailureEntry)) return bad('failures', 'a list of {pod, wave, reason, message, at}');
  if (!arrayOf(doc.gates, isGate)) return bad('gates', 'a list of {wave, gate, result, at}');
  if (!arrayOf(doc.history, isHistory)) return bad('history', 'a list of {time, event, message}');
  if (!arrayOf(doc.waveSummaries, isSummary)) return bad('waveSummaries', 'a list of wave summaries');
  if (doc.waiting !== undefined) {
    const w = doc.waiting;
    if (
      !isObject(w) ||
      !['pause', 'approval', 'window', 'paused'].includes(w.kind as string) ||
      !isCount(w.wave) ||
      !isString(w.since)
    ) {
      return bad('waiting', 'a {kind, wave, since} object');
    }
  }
  if (doc.waitingForNodes !== undefined && !arrayOf(doc.waitingForNodes, isNodeWait))
    return bad('waitingForNodes', 'a list of {pod, node, message}');
  if (doc.heldByPdb !== undefined) {
    const h = doc.heldByPdb;
    if (!isObject(h) || !isString(h.pod) || !isString(h.pdb) || !isString(h.message) || !isString(h.since))
      return bad('heldByPdb', 'a {pod, pdb, message, since} object');
  }
  if (doc.inFlightCount !== undefined && !isCount(doc.inFlightCount)) return bad('inFlightCount', 'a count');
  if (doc.trimmed !== undefined && !arrayOf(doc.trimmed, isString)) return bad('trimmed', 'a list of strings');
  if (doc.rollback !== undefined) {
    const rb = doc.rollback;
    if (!isObject(rb) || !isCount(rb.pods) || !isCount(rb.done) || !isCount(rb.failed))
      return bad('rollback', 'a {scope, pods, done, failed} object');
  }
  const { schema: _schema, ...value } = doc;
  return { ok: true, value: value as unknown as Omit<RolloutRecord, 'planText' | 'approvals' | 'control'> };
}

/** Decodes a record ConfigMap; a damaged one is reported as data, never thrown. */
export function decodeRecord(cm: V1ConfigMap): DecodedRecord {
  const data = cm.data ?? {};
  const resourceVersion = cm.metadata?.resourceVersion;
  const approvals = decodeApprovals(data);
  const planText = data[PLAN_KEY];
  const rv = resourceVersion === undefined ? {} : { resourceVersion };
  const damaged = (problem: string): DecodedRecord => ({
    ok: false,
    problem,
    approvals,
    ...(planText === undefined ? {} : { planText }),
    ...rv,
  });
  const text = data[STATUS_KEY];
  if (text === undefined) return damaged(`the ConfigMap has no ${STATUS_KEY} key`);
  const doc = parseJson(text);
  if (doc === undefined) return damaged(`${STATUS_KEY} is not valid JSON`);
  const checked = validateStatus(doc);
  if (!checked.ok) return damaged(checked.problem);
  const control = data[CONTROL_KEY] === undefined ? undefined : decodeControl(data[CONTROL_KEY]).state;
  return {
    ok: true,
    record: { ...checked.value, planText: planText ?? '', approvals, ...(control ? { control } : {}) },
    ...rv,
  };
}

/**
 * The record ConfigMap's data without an earlier kwave's decisions (`approval.wave-N`,
 * `control.json` kept in the record itself), which a run no longer acts on.
 */
export function withoutLegacyDecisions(data: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data ?? {}).filter(([key]) => !key.startsWith(APPROVAL_KEY_PREFIX) && key !== CONTROL_KEY),
  );
}

/**
 * The record with the decisions of its decisions ConfigMap (`kwave-<plan>.control`). Without one,
 * the record as decoded: a record of an earlier kwave shows the approvals and requests it holds itself.
 */
export function withDecisions(record: RolloutRecord, decisions: V1ConfigMap | undefined): RolloutRecord {
  if (!decisions) return record;
  const data = decisions.data ?? {};
  const { control: _legacy, ...rest } = record;
  const control = data[CONTROL_KEY] === undefined ? undefined : decodeControl(data[CONTROL_KEY]).state;
  return { ...rest, approvals: decodeApprovals(data), ...(control ? { control } : {}) };
}
