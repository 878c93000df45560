// The peer benchmark's figures: one measurement per tool and repeat, a row per tool (medians of
// the repeats; in place only if every repeat was), and the file `peers-N.json`. Pure.
import type { AuditRecord } from '../../src/sim/controlPlane/audit.js';
import type { Phases } from './fleetProgress.js';

/** `minimal`: bench/fleet/minimal-client.mjs, the bare protocol with the same M and D (the floor). */
export const TOOLS = ['kwave', 'kruise', 'minimal', 'kubectl-loop'] as const;
export type Tool = (typeof TOOLS)[number];
export type KubeletKind = 'simulated' | 'real';

/** Whose requests in the audit log are a tool's: by user, and by the start of the user agent. */
export interface Requester {
  user: string;
  userAgentPrefix?: string;
}

export interface Writes {
  /** Writes the server accepted (create, update, patch, delete). */
  accepted: number;
  /** Write attempts answered with an error (409 Conflict, a webhook's refusal). */
  refused: number;
  /** Of the accepted, those to pods (and their subresources). */
  pods: number;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** The write requests of `who` among `records`. */
export function writesOf(records: readonly AuditRecord[], who: Requester): Writes {
  const out: Writes = { accepted: 0, refused: 0, pods: 0 };
  for (const r of records) {
    if (!WRITE_VERBS.has(r.verb) || r.user !== who.user) continue;
    if (who.userAgentPrefix !== undefined && !(r.userAgent ?? '').startsWith(who.userAgentPrefix)) continue;
    if (r.code !== undefined && r.code >= 400) out.refused++;
    else {
      out.accepted++;
      if (r.resource === 'pods') out.pods++;
    }
  }
  return out;
}

/** One tool's upgrade of one fresh fleet. */
export interface Measurement {
  tool: Tool;
  pods: number;
  wallSeconds: number;
  writes: Writes;
  /** Seconds each pod was not Ready (from /sim/stats): p50, p95, max. */
  unready: { p50: number; p95: number; max: number };
  /** The most pods not Ready at once (from /sim/stats: the node agent's view). */
  maxNotReady: number;
  /** The same from the bench's own watch of the fleet, in the order the API server stored the versions. */
  maxNotReadyWatched: number;
  /** Of the watched, the tool's own pods (FleetSummary.maxNotReadyByTool). */
  maxNotReadyByTool: number;
  cpuSeconds: number;
  rssMb: number;
  inPlace: boolean;
  /** Per pod seen not Ready before its image patch: seconds between the two, sorted. */
  drainsSeconds: number[];
  /** The pods seen Ready again in the middle of their drain (FleetSummary.readyMidDrain). */
  readyMidDrain: number;
  /** The pods seen not Ready again after they counted (FleetSummary.readyLostAfterDone). */
  readyLostAfterDone: number;
  /** Where the pods' turns went, as the bench's watch saw them (FleetProgress). */
  phases: Phases;
}

/** A row's phases: per run the median over pods (ms → s), then the median over the repeats. */
export interface PhasesRow {
  /** The change to the first gate closed: the tool's start-up and first write. */
  first_close_s: number;
  /** Gate closed → pod not Ready: the kubelet's turn. */
  close_to_not_ready_s: number;
  /** Not Ready → image patched; `drain_min_s` the shortest (at least D is the promise). */
  drain_s: number;
  drain_min_s: number;
  /** Image patched → container ready on the target imageID: the kubelet's restart. */
  patch_to_running_s: number;
  /** Container ready on the target → pod Ready: the tool reopens its gate. */
  running_to_ready_s: number;
  /** Σ per pod (gate closed → done) / (M × (wall − first close)): how full the tool kept its window of M. */
  window_full: number;
}

/** A row of peers-N.json, as the issue fixes its shape. */
export interface PeerRow {
  tool: Tool;
  wall_s: number;
  writes_per_pod: number;
  unready_p50_s: number;
  unready_p95_s: number;
  max_not_ready: number;
  cpu_s: number;
  rss_mb: number;
  in_place: boolean;
  phases: PhasesRow;
  /** Each repeat's wall, its pods seen Ready again mid-drain and not Ready again after they counted, in the order run. */
  runs: { wall_s: number; ready_mid_drain: number; ready_lost_after_done: number }[];
}

export interface PeersFile {
  pods: number;
  maxUnavailable: number;
  drainSeconds: number;
  kubelet: KubeletKind;
  rows: PeerRow[];
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The row of one tool: the median of each figure over its repeats; `maxUnavailable` is M. */
export function peerRow(runs: readonly Measurement[], maxUnavailable: number): PeerRow {
  const tool = runs[0]?.tool;
  if (!tool || runs.some((r) => r.tool !== tool)) throw new Error('peerRow: the runs of one tool, at least one');
  const m = (f: (r: Measurement) => number, digits: number) => round(median(runs.map(f)), digits);
  return {
    tool,
    wall_s: m((r) => r.wallSeconds, 2),
    writes_per_pod: m((r) => r.writes.accepted / r.pods, 2),
    unready_p50_s: m((r) => r.unready.p50, 2),
    unready_p95_s: m((r) => r.unready.p95, 2),
    max_not_ready: m((r) => budgetOvershoot(r, 0).most, 0),
    cpu_s: m((r) => r.cpuSeconds, 2),
    rss_mb: m((r) => r.rssMb, 0),
    in_place: runs.every((r) => r.inPlace),
    phases: {
      first_close_s: m((r) => r.phases.firstCloseMs / 1000, 2),
      close_to_not_ready_s: m((r) => median(r.phases.closeToNotReadyMs) / 1000, 2),
      drain_s: m((r) => median(r.drainsSeconds), 2),
      drain_min_s: m((r) => r.drainsSeconds[0] ?? NaN, 2),
      patch_to_running_s: m((r) => median(r.phases.patchToRunningMs) / 1000, 2),
      running_to_ready_s: m((r) => median(r.phases.runningToReadyMs) / 1000, 2),
      window_full: m((r) => r.phases.busyMs / (maxUnavailable * (r.wallSeconds * 1000 - r.phases.firstCloseMs)), 2),
    },
    runs: runs.map((r) => ({
      wall_s: round(r.wallSeconds, 2),
      ready_mid_drain: r.readyMidDrain,
      ready_lost_after_done: r.readyLostAfterDone,
    })),
  };
}

/** peers-N.json: a row per tool, in the order of TOOLS. */
export function peersFile(setting: Omit<PeersFile, 'rows'>, measurements: readonly Measurement[]): PeersFile {
  const rows = TOOLS.map((tool) => measurements.filter((m) => m.tool === tool))
    .filter((runs) => runs.length > 0)
    .map((runs) => peerRow(runs, setting.maxUnavailable));
  return { ...setting, rows };
}

export interface TargetCheck {
  /** kwave's wall / Kruise's (target ≤ 0.8). */
  wallRatio: number;
  unreadyP95: boolean;
  writesPerPod: boolean;
  inPlace: boolean;
  /** The minimal client's wall / Kruise's, when it ran: the least any client could reach (the floor). */
  floorRatio?: number;
}

/** The targets for kwave against Kruise, from a file with both rows; undefined without them. */
export function checkTargets(file: PeersFile): TargetCheck | undefined {
  const kwave = file.rows.find((r) => r.tool === 'kwave');
  const kruise = file.rows.find((r) => r.tool === 'kruise');
  if (!kwave || !kruise) return undefined;
  const minimal = file.rows.find((r) => r.tool === 'minimal');
  return {
    wallRatio: round(kwave.wall_s / kruise.wall_s, 2),
    unreadyP95: kwave.unready_p95_s <= kruise.unready_p95_s,
    writesPerPod: kwave.writes_per_pod <= kruise.writes_per_pod,
    inPlace: kwave.in_place && kruise.in_place,
    ...(minimal ? { floorRatio: round(minimal.wall_s / kruise.wall_s, 2) } : {}),
  };
}

/**
 * The budget as the bench saw it kept, against M: `most`, the most pods not Ready at once (the
 * larger of the two counts); `overByTool`, by how many the tool's own pods alone went over M
 * (a broken promise: 0 when kept); `overWithOthers`, by how many all of them did (pods made not
 * Ready by something else on top of the tool's: no tool can prevent that, only wait for them).
 */
export function budgetOvershoot(
  m: Pick<Measurement, 'maxNotReady' | 'maxNotReadyWatched' | 'maxNotReadyByTool'>,
  maxUnavailable: number,
) {
  const most = Math.max(m.maxNotReady, m.maxNotReadyWatched);
  return {
    most,
    overByTool: Math.max(0, m.maxNotReadyByTool - maxUnavailable),
    overWithOthers: Math.max(0, most - maxUnavailable),
  };
}
