// How the rollout record stays under a ConfigMap's size limit (1 MiB of data: each key's bytes
// and its value's), whatever the fleet and the gates. Pure.
//
// Two layers. The fold (reducer.ts) keeps every list bounded (LIMITS in record.ts), every text
// clipped and every measured vector cut to its first values with a count of the rest, so the
// record in memory is bounded too. The encoding (codec.ts) then lists at most LIMITS.inFlight pods
// in flight (the longest in flight; `inFlightCount` counts them all) and, should plan.yaml and
// status.json still pass their budget (a plan of nearly 1 MiB, gates with long messages), drops
// older entries step by step, then cuts plan.yaml, saying in `trimmed` what it left out.
import { LIMITS, type GateRecord, type RolloutRecord } from './record.js';

/** A ConfigMap's data may hold 1 MiB (the API server refuses more). */
export const CONFIGMAP_DATA_LIMIT = 1024 * 1024;

/**
 * The bytes the runner's keys (plan.yaml, status.json) may take: the limit less what the other
 * writers' keys take now (approvals, control.json), less a margin for those to grow between two
 * of the runner's writes.
 */
export const RECORD_MARGIN_BYTES = 64 * 1024;

/** plan.yaml keeps at most this much of the plan text (plans are at most 1 MiB, status.json needs room). */
const MAX_PLAN_TEXT_BYTES = 256 * 1024;

/** Longest text kept of a message (failures, gates, history); longer ones end in "…". */
const MAX_MESSAGE_CHARS = 500;

/** Values kept of a measured vector; the count of the rest goes beside them. */
export const MAX_MEASURED_VALUES = 10;

export const clip = (text: string, max = MAX_MESSAGE_CHARS): string =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

/** A measurement's value as the record keeps it: a vector cut to its first values, and how many were left out. */
export function boundedValue(value: unknown): { value: unknown; valuesLeftOut?: number } {
  if (!Array.isArray(value) || value.length <= MAX_MEASURED_VALUES) return { value };
  return { value: value.slice(0, MAX_MEASURED_VALUES), valuesLeftOut: value.length - MAX_MEASURED_VALUES };
}

/** The pods in flight the record lists: the longest in flight first to be kept, the count of all. */
function boundedInFlight(record: RolloutRecord): RolloutRecord {
  const n = record.inFlight.length;
  if (n <= LIMITS.inFlight) return record.inFlightCount === undefined ? record : withoutCount(record);
  // Entries are in order of start (inFlight.ts): the first are the longest in flight.
  return { ...record, inFlight: record.inFlight.slice(0, LIMITS.inFlight), inFlightCount: n };
}

function withoutCount(record: RolloutRecord): RolloutRecord {
  const { inFlightCount: _count, ...rest } = record;
  return rest;
}

const fewerMeasurements = (gates: GateRecord[], keep: number): GateRecord[] =>
  gates.map((g) =>
    g.measurements && g.measurements.length > keep ? { ...g, measurements: g.measurements.slice(-keep) } : g,
  );

const tail = <T>(list: T[] | undefined, keep: number): T[] | undefined => list && list.slice(-keep);

/** The steps that shrink status.json, mildest first: each keeps the newest entries of a list. */
const SHRINK: { what: string; apply: (r: RolloutRecord) => RolloutRecord }[] = [
  { what: 'older gate measurements', apply: (r) => ({ ...r, gates: fewerMeasurements(r.gates, 3) }) },
  { what: 'older history', apply: (r) => ({ ...r, history: tail(r.history, 20)! }) },
  { what: 'older wave summaries', apply: (r) => ({ ...r, waveSummaries: tail(r.waveSummaries, 50)! }) },
  {
    what: 'older failures and node waits',
    apply: (r) => ({
      ...r,
      failures: tail(r.failures, 10)!,
      ...(r.waitingForNodes ? { waitingForNodes: tail(r.waitingForNodes, 10)! } : {}),
    }),
  },
  { what: 'older gates', apply: (r) => ({ ...r, gates: fewerMeasurements(tail(r.gates, 10)!, 1) }) },
  {
    what: 'pods in flight',
    apply: (r) => ({ ...r, inFlight: r.inFlight.slice(0, 10), inFlightCount: r.inFlightCount ?? r.inFlight.length }),
  },
];

export const byteSize = (text: string): number => Buffer.byteLength(text, 'utf8');

export interface FitInput {
  /** status.json of a record, as the codec encodes it. */
  status: (record: RolloutRecord) => string;
  /** The bytes the runner's two keys may take in all. */
  budget: number;
  statusKey: string;
  planKey: string;
}

export type Fitted =
  | { ok: true; record: RolloutRecord; status: string; planText: string; bytes: number; trimmed: string[] }
  | { ok: false; bytes: number; trimmed: string[] };

const PLAN_CUT = 'the end of plan.yaml';

/**
 * The record as it fits in `budget` bytes (keys included): plan.yaml cut to MAX_PLAN_TEXT_BYTES;
 * then, while status.json and plan.yaml do not fit together, status.json shrunk by the SHRINK
 * steps in order; then plan.yaml cut to the room left. `trimmed` names what was left out (and is
 * written in status.json); not ok when even status.json shrunk to its last step, without plan
 * text, does not fit.
 */
export function fitRecord(record: RolloutRecord, input: FitInput): Fitted {
  const keys = byteSize(input.statusKey) + byteSize(input.planKey);
  const size = (status: string, planText: string) => keys + byteSize(status) + byteSize(planText);
  let r = boundedInFlight(record);
  const trimmed: string[] = [];
  if (byteSize(r.planText) > MAX_PLAN_TEXT_BYTES) {
    r = { ...r, planText: cutPlanText(r.planText, MAX_PLAN_TEXT_BYTES) };
    trimmed.push(PLAN_CUT);
  }
  const encode = () => input.status(trimmed.length > 0 ? { ...r, trimmed } : withoutTrimmed(r));
  let status = encode();
  for (const step of SHRINK) {
    if (size(status, r.planText) <= input.budget) break;
    r = step.apply(r);
    trimmed.push(step.what);
    status = encode();
  }
  if (size(status, r.planText) <= input.budget)
    return { ok: true, record: r, status, planText: r.planText, bytes: size(status, r.planText), trimmed };
  if (!trimmed.includes(PLAN_CUT)) trimmed.push(PLAN_CUT);
  status = encode();
  const room = input.budget - size(status, '');
  if (room < 0) return { ok: false, bytes: size(status, r.planText), trimmed };
  const planText = cutPlanText(r.planText, room);
  return { ok: true, record: r, status, planText, bytes: size(status, planText), trimmed };
}

function withoutTrimmed(record: RolloutRecord): RolloutRecord {
  if (record.trimmed === undefined) return record;
  const { trimmed: _trimmed, ...rest } = record;
  return rest;
}

/** The plan text cut to at most `room` bytes, at a line's end, with a comment saying so. */
export function cutPlanText(text: string, room: number): string {
  // A text cut before says how long the plan was; cut again, it keeps saying so.
  const whole = /# … kwave kept the first lines of this plan only: .* \((\d+) bytes in all\)\n$/.exec(text)?.[1];
  const note = `# … kwave kept the first lines of this plan only: its record must fit a ConfigMap (${whole ?? byteSize(text)} bytes in all)\n`;
  const keep = room - byteSize(note);
  if (keep <= 0) return byteSize(note) <= room ? note : '';
  // Cut the UTF-8 bytes, then back to the last whole line (a character cut in two lies after it).
  const head = Buffer.from(text, 'utf8').subarray(0, keep).toString('utf8');
  return `${head.slice(0, head.lastIndexOf('\n') + 1)}${note}`;
}
