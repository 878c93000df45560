// What `kwave dashboard` shows: every rollout of the namespaces it follows, as one JSON document,
// from the rollout records (ConfigMaps), the plans' Leases and the Events kwave wrote on the
// records. Pure: the cluster's objects and the clock in, the view out; server.ts pushes it to the
// page. Bounded whatever the fleet size: the record holds aggregates and bounded lists
// (record/record.ts LIMITS), and the view keeps at most the few entries of each list a person
// reads (VIEW_LIMITS): 50,000 pods make the same size of view as 50.
import type { V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { textMemo } from '../inplace/textMemo.js';
import { leaseView } from '../lease/leaseView.js';
import { loadPlanText } from '../plan/load.js';
import type { Plan } from '../plan/types.js';
import { decodeRecord, withDecisions } from '../record/codec.js';
import { controlName, type RolloutRecord } from '../record/record.js';
import { resolveBudget } from '../rollout/budget.js';
import type { PodCounts } from '../rollout/podCounts.js';
import { gateView, type GateView } from './gateView.js';
import { waveBars, type WaveBar } from './waveBars.js';

/** How many entries of each list the view keeps (the newest, or the longest in their step). */
export const VIEW_LIMITS = { inFlight: 25, waitingForNodes: 10, failures: 10, history: 20, events: 10, gates: 6 };

/** A core/v1 Event as the view reads it (wire JSON). */
export interface EventObject {
  metadata?: { name?: string; namespace?: string };
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  lastTimestamp?: string;
  firstTimestamp?: string;
  eventTime?: string;
}

export interface DashboardInput {
  /**
   * ConfigMaps labelled as rollout records (record/codec.ts recordLabels): the records and their
   * decisions ConfigMaps (`kwave-<plan>.control`, approvals and control requests).
   */
  records: readonly V1ConfigMap[];
  /** Leases of the same namespaces (only those named as a record are read). */
  leases: readonly V1Lease[];
  /** Events kwave wrote (on pods: failures and rollbacks). */
  events: readonly EventObject[];
  now: Date;
}

export type RolloutAction = 'approve' | 'pause' | 'resume' | 'abort';

export interface RolloutView {
  /** `namespace/plan`: the deep link's fragment. */
  id: string;
  namespace: string;
  /** Where people's decisions go (the plan's `controlNamespace`). */
  controlNamespace: string;
  plan: string;
  /** Set when the record cannot be read: what is wrong with it; most fields are then absent. */
  problem?: string;
  revision?: string;
  phase?: string;
  direction?: string;
  wave?: number;
  waves?: number;
  selected?: number;
  deferred?: number;
  counts?: PodCounts;
  /** Pods reverted after a halt (or by `kwave rollback`). */
  rollback?: { scope: string; pods: number; done: number; failed: number };
  startedAt?: string;
  updatedAt?: string;
  endedAt?: string;
  message?: string;
  /** The runner that last wrote the record. */
  runner?: string;
  lease: { holder: string; renewedAt?: string; expired: boolean } | null;
  waveBars: WaveBar[];
  budget?: { inFlight: number; concurrency?: number; maxUnavailable?: number };
  inFlight: { total: number; pods: { pod: string; wave: number; step: string; inStepMs: number; sinceMs: number }[] };
  waits: string[];
  waitingForNodes: { total: number; pods: { pod: string; node: string; message: string }[] };
  failures: { total: number; latest: { pod: string; wave: number; reason: string; message: string; at: string }[] };
  gates: GateView[];
  approval?: { wave: number; gate?: string; since: string };
  approvals: { wave: number; by: string; at: string }[];
  control: { action: string; by: string; at: string }[];
  history: { time: string; message: string }[];
  /** The latest Events kwave wrote in the namespace (on pods: failures, rollbacks). */
  events: { time: string; type: string; reason: string; object: string; message: string; count: number }[];
  /** What a person may ask for now; the API server still decides whether they may. */
  actions: RolloutAction[];
}

export interface DashboardView {
  generatedAt: string;
  rollouts: RolloutView[];
}

const TERMINAL = new Set(['Completed', 'Partial', 'RolledBack', 'Halted']);

/** The plan a record ran, read from its stored text once per text; undefined when it does not load. */
const planOf = textMemo((text: string): Plan | undefined => {
  const loaded = loadPlanText(text, 'plan.yaml');
  return loaded.ok ? loaded.plan : undefined;
}, 64);

export function dashboardView(input: DashboardInput): DashboardView {
  const leases = new Map(input.leases.map((l) => [`${l.metadata?.namespace}/${l.metadata?.name}`, l]));
  const events = eventsByNamespace(input.events);
  const isDecisions = (cm: V1ConfigMap) => cm.metadata?.name?.endsWith('.control') ?? false;
  const decisions = new Map(
    input.records.filter(isDecisions).map((cm) => [`${cm.metadata?.namespace}/${cm.metadata?.name}`, cm]),
  );
  const rollouts = input.records
    .filter((cm) => !isDecisions(cm))
    .map((cm) => rolloutView(cm, leases, decisions, events, input.now))
    .sort((a, b) => a.id.localeCompare(b.id));
  return { generatedAt: input.now.toISOString(), rollouts };
}

function rolloutView(
  cm: V1ConfigMap,
  leases: ReadonlyMap<string, V1Lease>,
  decisions: ReadonlyMap<string, V1ConfigMap>,
  events: ReadonlyMap<string, EventObject[]>,
  now: Date,
): RolloutView {
  const namespace = cm.metadata?.namespace ?? '';
  const name = cm.metadata?.name ?? '';
  const key = `${namespace}/${name}`;
  const lease = leases.get(key);
  const held = lease ? leaseView(lease, now) : undefined;
  const leaseShown = held?.holder
    ? {
        holder: held.holder,
        expired: held.expired,
        ...(held.renewedAt ? { renewedAt: held.renewedAt.toISOString() } : {}),
      }
    : null;
  const decoded = decodeRecord(cm);
  const planName = decoded.ok ? decoded.record.plan : name.replace(/^kwave-/, '');
  const plan = decoded.ok ? planOf(decoded.record.planText) : undefined;
  const controlNamespace = plan?.controlNamespace ?? namespace;
  const base = {
    id: `${namespace}/${planName}`,
    namespace,
    controlNamespace,
    plan: planName,
    lease: leaseShown,
    events: (events.get(namespace) ?? []).slice(-VIEW_LIMITS.events).map(eventLine),
  };
  if (!decoded.ok)
    return {
      ...base,
      problem: decoded.problem,
      waveBars: [],
      inFlight: { total: 0, pods: [] },
      waits: [],
      waitingForNodes: { total: 0, pods: [] },
      failures: { total: 0, latest: [] },
      gates: [],
      approvals: [],
      control: [],
      history: [],
      actions: [],
    };
  const r = withDecisions(decoded.record, decisions.get(`${controlNamespace}/${controlName(planName)}`));
  const t = now.getTime();
  const inFlight = [...r.inFlight]
    .map((p) => ({
      pod: p.pod,
      wave: p.wave,
      step: p.step,
      inStepMs: t - Date.parse(p.stepAt ?? p.since),
      sinceMs: t - Date.parse(p.since),
    }))
    .sort((a, b) => b.inStepMs - a.inStepMs);
  const nodes = r.waitingForNodes ?? [];
  return {
    ...base,
    revision: r.revision,
    phase: r.phase,
    direction: r.direction,
    wave: r.wave,
    waves: r.waves,
    selected: r.selected,
    deferred: r.deferred,
    counts: r.counts,
    ...(r.rollback ? { rollback: { ...r.rollback } } : {}),
    startedAt: r.startedAt,
    updatedAt: r.updatedAt,
    ...(r.endedAt ? { endedAt: r.endedAt } : {}),
    ...(r.message ? { message: r.message } : {}),
    runner: r.holder,
    waveBars: waveBars(r, plan),
    budget: {
      inFlight: r.counts.in_progress,
      ...(plan
        ? {
            concurrency: plan.strategy.concurrency,
            maxUnavailable: resolveBudget(plan.strategy.maxUnavailable, r.selected),
          }
        : {}),
    },
    inFlight: { total: inFlight.length, pods: inFlight.slice(0, VIEW_LIMITS.inFlight) },
    waits: waitsOf(r),
    waitingForNodes: {
      total: nodes.length,
      pods: nodes.slice(0, VIEW_LIMITS.waitingForNodes).map((w) => ({ pod: w.pod, node: w.node, message: w.message })),
    },
    failures: {
      total: r.failuresTotal,
      latest: r.failures.slice(-VIEW_LIMITS.failures).map((f) => ({ ...f })),
    },
    gates: r.gates.slice(-VIEW_LIMITS.gates).map((g) => gateView(g, plan)),
    ...(r.waiting?.kind === 'approval'
      ? {
          approval: {
            wave: r.waiting.wave,
            since: r.waiting.since,
            ...(r.waiting.gate ? { gate: r.waiting.gate } : {}),
          },
        }
      : {}),
    approvals: Object.entries(r.approvals)
      .map(([wave, a]) => ({ wave: Number(wave), by: a.by, at: a.at }))
      .sort((a, b) => a.wave - b.wave),
    control: (r.control?.history ?? []).slice(-5).map((c) => ({ action: c.action, by: c.by, at: c.at })),
    history: r.history.slice(-VIEW_LIMITS.history).map((h) => ({ time: h.time, message: h.message })),
    actions: actionsOf(r, held !== undefined && !held.free),
  };
}

/** Why nothing (or not everything) moves: the record's wait, a PDB's hold. */
function waitsOf(r: RolloutRecord): string[] {
  const out: string[] = [];
  const w = r.waiting;
  if (w) {
    const gate = w.gate ? ` (gate ${w.gate})` : '';
    if (w.kind === 'approval') out.push(`waiting for approval of wave ${w.wave}${gate}`);
    else if (w.kind === 'pause') out.push(`pausing after wave ${w.wave}${gate} until ${w.until ?? '?'}`);
    else if (w.kind === 'window') out.push(`waiting for the window before wave ${w.wave}: opens at ${w.until ?? '?'}`);
    else out.push(`paused by ${w.by ?? 'someone'} since ${w.since}: no new pod starts`);
  }
  if (r.heldByPdb)
    out.push(`${r.heldByPdb.pod} held by PodDisruptionBudget ${r.heldByPdb.pdb} since ${r.heldByPdb.since}`);
  return out;
}

/**
 * The actions that make sense now (record/control.ts says what each does): approve while a wave
 * waits for it; pause while a rollout runs and no pause stands; resume while one stands; abort
 * while a runner holds the lease of a rollout not yet ended.
 */
function actionsOf(r: RolloutRecord, runnerHolds: boolean): RolloutAction[] {
  const out: RolloutAction[] = [];
  if (r.waiting?.kind === 'approval') out.push('approve');
  const ended = TERMINAL.has(r.phase) && !runnerHolds;
  const paused = r.control?.paused !== undefined;
  if (!ended && !paused) out.push('pause');
  if (paused) out.push('resume');
  if (runnerHolds && !ended) out.push('abort');
  return out;
}

/** kwave's Events by namespace, oldest first: a rollout shows those of its record's namespace. */
function eventsByNamespace(events: readonly EventObject[]): Map<string, EventObject[]> {
  const out = new Map<string, EventObject[]>();
  for (const e of [...events].sort((a, b) => eventTime(a).localeCompare(eventTime(b)))) {
    const namespace = e.metadata?.namespace ?? e.involvedObject?.namespace ?? '';
    const list = out.get(namespace) ?? [];
    list.push(e);
    out.set(namespace, list);
  }
  return out;
}

const eventTime = (e: EventObject): string => e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? '';

function eventLine(e: EventObject): RolloutView['events'][number] {
  return {
    time: eventTime(e),
    type: e.type ?? 'Normal',
    reason: e.reason ?? '',
    object: `${(e.involvedObject?.kind ?? '').toLowerCase()}/${e.involvedObject?.name ?? ''}`,
    message: e.message ?? '',
    count: e.count ?? 1,
  };
}
