// What `kwave plan` shows: a FleetSelection (src/rollout/select.ts) as data (`-o json`) and as
// text for people. Pure: the command gathers the pods and prints what this returns.
import { podKey } from '../inplace/podView.js';
import { formatResources } from '../inplace/resources.js';
import type { Gate, Plan } from '../plan/types.js';
import { formatPlanDuration } from '../plan/duration.js';
import type { V1Node } from '@kubernetes/client-node';
import { nodeWaits, row, standInRows, type PodRow } from './planPods.js';
import type { FleetSelection, PodProblem, ProblemKind } from '../rollout/select.js';
import { gateAppliesAfterWave } from '../rollout/gateCheck.js';
import { renderSelector } from '../rollout/labelSelector.js';
import { windowState } from '../rollout/window.js';
import { columns, count, formatDuration } from './output/text.js';
import type { OwnerAction, OwnerEntry } from '../rollout/owners.js';
import type { AdmissionWebhooks } from '../session/admissionWebhooks.js';
import { webhookLines } from './webhookLines.js';
import { refusingProblems } from '../session/assessment.js';
import type { ZoneInfo } from '../session/nodes.js';

export interface GateRow {
  name: string;
  pauseMs: number;
  approval: boolean;
  prometheus: boolean;
  webhook: boolean;
}

interface WaveRow {
  wave: number;
  /** Selected pods at the target once this wave is complete. */
  target: number;
  pods: PodRow[];
  /** Gates checked after this wave, before the next starts. */
  gatesAfter: GateRow[];
  /**
   * Pods from later in the order that `kwave run` would upgrade in this wave instead of its pods
   * whose node cannot act now (`standingInFor`), so the wave still reaches its target before its
   * gates; absent when every node of its pods can act.
   */
  standIns?: PodRow[];
  standingInFor?: PodRow[];
}

/** The dry run as data: what `-o json` prints, and what the text is rendered from. */
export interface PlanReport {
  plan: string;
  revision: string;
  file: string;
  namespaces: string[];
  selector: string;
  update: { name: string; image?: string; resources?: string }[];
  selected: number;
  alreadyAtTarget: number;
  toUpgrade: number;
  resuming: number;
  /** Waves of the plan for this many pods ("wave i of n"). */
  waveCount: number;
  /** Plan waves left out because pods already at the target meet their targets. */
  satisfiedWaves: number[];
  waves: WaveRow[];
  /** Pods already at the target images: skipped. */
  skipped: PodRow[];
  /** Pods past the last wave of a partial rollout: left for a later plan. */
  deferred: PodRow[];
  /** Pods to upgrade whose node cannot act now: `kwave run` starts them only once it is back. */
  waitingForNodes: (PodRow & { waiting: string })[];
  /** `maxUnavailable` in pods. */
  budget: number;
  concurrency: number;
  /** `failurePolicy.maxFailed` in pods: one more failure halts the run. */
  maxFailed: number;
  rollback: Plan['failurePolicy']['rollback'];
  /** `spec.owners`. */
  ownersMode: Plan['owners'];
  order: Plan['strategy']['order'];
  zones: ZoneInfo;
  problems: PodProblem[];
  errors: number;
  warnings: number;
  /** True when error-severity problems would make `kwave run` refuse (exit 2). */
  refused: boolean;
  /** The maintenance window now, when the plan has one: `kwave run` waits while it is closed. */
  window?: WindowNow;
  /** The selected pods' owners and what kwave does about each (spec.owners); refusals and warnings are also in `problems`. */
  owners: OwnerRow[];
  /** The admission webhooks that would judge the run's writes, or why they are unknown. */
  admissionWebhooks?: AdmissionWebhooks;
}

interface OwnerRow {
  kind: string;
  namespace: string;
  name: string;
  strategy?: string;
  /** Selected pods it owns. */
  pods: number;
  action: OwnerAction;
  message: string;
}

/** A maintenance window at the time of the dry run; `opensAt` is null for a window that never opens. */
type WindowNow = { open: true } | { open: false; opensAt: string | null; msLeft: number | null };

function windowNow(plan: Plan, nowMs: number): WindowNow | undefined {
  if (!plan.window) return undefined;
  const state = windowState(plan.window, nowMs);
  if (state.open) return { open: true };
  if (state.opensAtMs === undefined) return { open: false, opensAt: null, msLeft: null };
  return { open: false, opensAt: new Date(state.opensAtMs).toISOString(), msLeft: state.opensAtMs - nowMs };
}

/** The gates checked after plan wave `wave` of `waveCount` (default `afterWaves`: every wave but the last). */
export function gatesAfter(gates: readonly Gate[], wave: number, waveCount: number): GateRow[] {
  return gates
    .filter((g) => gateAppliesAfterWave(g, wave, waveCount))
    .map((g) => ({
      name: g.name,
      pauseMs: g.pauseMs,
      approval: g.approval,
      prometheus: g.prometheus !== undefined,
      webhook: g.webhook !== undefined,
    }));
}

/** The report of a dry run at `nowMs` (which only the maintenance window and node ages depend on); `nodes` as listed, if they could be. */
export function planReport(
  plan: Plan,
  sel: FleetSelection,
  zones: ZoneInfo,
  nowMs = Date.now(),
  nodes?: ReadonlyMap<string, V1Node>,
  owners: readonly OwnerEntry[] = [],
  admissionWebhooks?: AdmissionWebhooks,
): PlanReport {
  const window = windowNow(plan, nowMs);
  const resuming = new Set(sel.resumed.map(podKey));
  const { partition } = sel;
  const errors = sel.problems.filter((p) => p.severity === 'error').length;
  const standing = standInRows(partition, nodes, resuming);
  return {
    plan: plan.name,
    revision: plan.revision,
    file: plan.source.file,
    namespaces: plan.target.namespaces,
    selector: renderSelector(plan.target.selector),
    update: plan.update.containers.map((c) => ({
      name: c.name,
      ...(c.image !== undefined ? { image: c.image } : {}),
      ...(c.resources !== undefined ? { resources: formatResources(c.resources) } : {}),
    })),
    selected: sel.selected.length,
    alreadyAtTarget: sel.done.length,
    toUpgrade: partition.waves.reduce((n, w) => n + w.pods.length, 0),
    resuming: sel.resumed.length,
    waveCount: partition.waveCount,
    satisfiedWaves: partition.satisfied,
    waves: partition.waves.map((w) => ({
      wave: w.index,
      target: w.target,
      pods: w.pods.map((p) => row(p, resuming, plan.update.containers)),
      gatesAfter: gatesAfter(plan.gates, w.index, partition.waveCount),
      ...standing.get(w.index),
    })),
    skipped: sel.done.map((p) => row(p, resuming)),
    deferred: partition.deferred.map((p) => row(p, resuming)),
    waitingForNodes: nodeWaits(
      partition.waves.flatMap((w) => w.pods),
      nodes,
      nowMs,
      resuming,
    ),
    budget: sel.budget,
    concurrency: plan.strategy.concurrency,
    maxFailed: sel.maxFailed,
    rollback: plan.failurePolicy.rollback,
    ownersMode: plan.owners,
    order: plan.strategy.order,
    zones,
    problems: sel.problems,
    errors,
    warnings: sel.problems.length - errors,
    refused: refusingProblems(sel.problems).length > 0,
    ...(window ? { window } : {}),
    owners: owners.map((o) => ({
      kind: o.kind,
      namespace: o.namespace,
      name: o.name,
      ...(o.strategy ? { strategy: o.strategy } : {}),
      pods: o.pods.length,
      action: o.action,
      message: o.message,
    })),
    ...(admissionWebhooks ? { admissionWebhooks } : {}),
  };
}

// ---- text -------------------------------------------------------------------------------------

export interface TextOptions {
  /** List every pod and problem instead of the first and last few of long lists. */
  all?: boolean;
}

/** Lists longer than this are shortened to their first HEAD and last TAIL entries. */
const LONG_LIST = 12;
const HEAD = 8;
const TAIL = 2;
/** Problems of one kind shown before "… N more". */
const PROBLEMS_PER_KIND = 5;

/** Which entries of a list of `n` to show: all, or the head and tail with a gap. */
function shown<T>(items: readonly T[], all: boolean): { head: T[]; hidden: number; tail: T[] } {
  if (all || items.length <= LONG_LIST) return { head: [...items], hidden: 0, tail: [] };
  return { head: items.slice(0, HEAD), hidden: items.length - HEAD - TAIL, tail: items.slice(-TAIL) };
}

function gateText(g: GateRow): string {
  const what = [
    g.pauseMs > 0 ? `pause ${formatPlanDuration(g.pauseMs)}` : '',
    g.approval ? 'approval' : '',
    g.prometheus ? 'prometheus' : '',
    g.webhook ? 'webhook' : '',
  ].filter(Boolean);
  return `gate ${g.name}${what.length > 0 ? ` (${what.join(', ')})` : ''}`;
}

/** Pod lines of several lists, laid out in one set of columns so they line up across waves. */
function podLines(lists: readonly PodRow[][], all: boolean, zonesKnown: boolean): string[][] {
  const parts = lists.map((l) => shown(l, all));
  const cells = (p: PodRow) => [
    podKey(p),
    p.node ?? '-',
    zonesKnown ? (p.zone ?? '-') : '?',
    p.resuming ? '(resuming)' : '',
    (p.resizes ?? [])
      .map((r) => `${r.container}: ${r.from} → ${r.to} (${r.restarts ? 'restarts the container' : 'no restart'})`)
      .join('; '),
  ];
  const flat = parts.flatMap((s) => [...s.head, ...s.tail].map(cells));
  const laid = columns(flat);
  let i = 0;
  const more = (n: number) => `… ${n} more (--all lists every pod)`;
  return parts.map((s) => {
    const out = s.head.map(() => laid[i++]!);
    if (s.hidden > 0) out.push(more(s.hidden));
    out.push(...s.tail.map(() => laid[i++]!));
    return out.map((l) => `  ${l}`);
  });
}

function problemLines(problems: readonly PodProblem[], all: boolean): string[] {
  const byKind = new Map<ProblemKind, PodProblem[]>();
  for (const p of problems) byKind.set(p.kind, [...(byKind.get(p.kind) ?? []), p]);
  const out: string[] = [];
  // Errors first: they decide whether the run would go.
  const kinds = [...byKind.keys()].sort(
    (a, b) => Number(byKind.get(a)![0]!.severity === 'warning') - Number(byKind.get(b)![0]!.severity === 'warning'),
  );
  for (const kind of kinds) {
    const list = byKind.get(kind)!;
    const show = all || list.length <= PROBLEMS_PER_KIND + 1 ? list : list.slice(0, PROBLEMS_PER_KIND);
    for (const p of show) out.push(`  ${p.severity === 'error' ? 'error  ' : 'warning'}  ${p.message}`);
    if (show.length < list.length)
      out.push(`  ${' '.repeat(7)}  … ${list.length - show.length} more ${kind} problems (--all lists them)`);
  }
  return out;
}

export function renderPlanText(r: PlanReport, options: TextOptions = {}): string[] {
  const all = options.all ?? false;
  const out: string[] = [];
  const ns = `namespace${r.namespaces.length > 1 ? 's' : ''} ${r.namespaces.join(', ')}`;
  out.push(`plan ${r.plan} (revision ${r.revision}) from ${r.file}`);
  out.push(`target: pods in ${ns} matching ${r.selector || '(everything)'}`);
  out.push(
    `update: ${r.update.map((c) => `${c.name} → ${[c.image, c.resources].filter(Boolean).join(' + ')}`).join(', ')}`,
  );
  const parts = [
    `${r.toUpgrade} to upgrade in ${count(r.waves.length, 'wave')}`,
    `${r.alreadyAtTarget} already at target`,
  ];
  if (r.resuming > 0) parts.push(`${r.resuming} to resume from an earlier run`);
  if (r.deferred.length > 0) parts.push(`${r.deferred.length} deferred`);
  if (r.waitingForNodes.length > 0) parts.push(`${r.waitingForNodes.length} waiting for their node`);
  out.push(`selected ${count(r.selected, 'pod')}: ${parts.join(', ')}`);
  out.push(
    `limits: at most ${count(r.budget, 'pod')} unavailable at once, ${r.concurrency} in flight, order ${r.order}`,
  );
  const halt =
    r.maxFailed === 0
      ? 'the first failed pod halts the run'
      : `more than ${count(r.maxFailed, 'failed pod')} halt the run`;
  out.push(`failures: ${halt}, then rollback: ${r.rollback}`);
  if (!r.zones.known) out.push(`zones: unknown, ${r.zones.reason}`);
  const closed = r.window && !r.window.open ? windowClosedText(r.window) : undefined;
  if (closed) out.push(`window: ${closed}`);
  if (r.waitingForNodes.length > 0) {
    // Up front: these are what a run would leave untouched (exit 5) unless the nodes come back.
    out.push(
      `waiting for their node (${r.waitingForNodes.length}): kwave run leaves them untouched until it can act again`,
    );
    const w = shown(r.waitingForNodes, all);
    const lines = columns([...w.head, ...w.tail].map((p) => [podKey(p), p.waiting]));
    out.push(...lines.slice(0, w.head.length).map((l) => `  ${l}`));
    if (w.hidden > 0) out.push(`  … ${w.hidden} more (--all lists every pod)`);
    out.push(...lines.slice(w.head.length).map((l) => `  ${l}`));
  }
  if (r.satisfiedWaves.length > 0) {
    out.push(
      `wave${r.satisfiedWaves.length > 1 ? 's' : ''} ${r.satisfiedWaves.join(', ')} already met by pods at target`,
    );
  }

  const listed = podLines([...r.waves.map((w) => w.pods), r.skipped, r.deferred], all, r.zones.known);
  r.waves.forEach((w, i) => {
    out.push(
      '',
      `wave ${w.wave}/${r.waveCount}: ${count(w.pods.length, 'pod')}, then ${w.target} of ${r.selected} at target`,
    );
    out.push(...listed[i]!);
    if (w.standIns && w.standingInFor) {
      const names = (rows: PodRow[]) => rows.map((p) => podKey(p)).join(', ');
      const forText = w.standingInFor.length > 0 ? ` for ${names(w.standingInFor)} (waiting for their node)` : '';
      out.push(`  standing in${forText}: ${names(w.standIns)}`);
    }
    for (const g of w.gatesAfter) out.push(`  then ${gateText(g)}`);
  });
  if (r.skipped.length > 0) {
    out.push('', `skipped, already at target: ${count(r.skipped.length, 'pod')}`);
    out.push(...listed[r.waves.length]!);
  }
  if (r.deferred.length > 0) {
    out.push(
      '',
      `deferred past the last wave (a partial rollout; a later plan continues): ${count(r.deferred.length, 'pod')}`,
    );
    out.push(...listed[r.waves.length + 1]!);
  }
  if (r.owners.length > 0) {
    // Refusals and warnings say why under problems; what will happen is said here.
    out.push('', `owners (spec.owners: ${r.ownersMode}):`);
    const lines = columns(
      r.owners.map((o) => [
        `${o.kind} ${o.namespace}/${o.name}`,
        o.strategy ?? '-',
        count(o.pods, 'selected pod'),
        o.action,
      ]),
    );
    r.owners.forEach((o, i) => {
      out.push(`  ${lines[i]}`);
      if (o.action === 'update' || o.action === 'in-step')
        out.push(`    ${o.message.slice(o.message.indexOf(': ') + 2)}`);
    });
  }
  if (r.admissionWebhooks) out.push(...webhookLines(r.admissionWebhooks));
  if (r.problems.length > 0) {
    out.push('', `problems: ${count(r.errors, 'error')}, ${count(r.warnings, 'warning')}`);
    out.push(...problemLines(r.problems, all));
  }
  out.push('');
  if (r.refused) out.push(`REFUSED: kwave run would refuse this plan (${count(r.errors, 'error')} above).`);
  else if (r.toUpgrade === 0) out.push(`nothing to do: every selected pod is already at the target.`);
  else if (closed)
    out.push(
      `OK: kwave run would upgrade ${count(r.toUpgrade, 'pod')} in ${count(r.waves.length, 'wave')}, but only once the window opens: ${closed}. Nothing was written.`,
    );
  else
    out.push(
      `OK: kwave run would upgrade ${count(r.toUpgrade, 'pod')} in ${count(r.waves.length, 'wave')}. Nothing was written.`,
    );
  return out;
}

/** `… closed now; it opens at 2026-12-02T01:00:00.000Z (in 16h00m)`, or that it never opens. */
function windowClosedText(w: Extract<WindowNow, { open: false }>): string {
  if (w.opensAt === null || w.msLeft === null) return 'the maintenance window is closed and never opens';
  return `the maintenance window is closed now; it opens at ${w.opensAt} (in ${formatDuration(w.msLeft)})`;
}
