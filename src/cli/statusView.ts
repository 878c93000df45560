// What `kwave status` shows, as text or as one JSON object. Pure: record, lease and the clock in,
// a string out; the command does the reading and the printing.
import type { NodeWait } from '../rollout/events.js';
import { formatAge, formatDuration } from '../durationText.js';
import type { GateMeasurement, GateRecord, RolloutRecord, Waiting } from '../record/record.js';
import { describeHolder, type LeaseView } from '../lease/leaseView.js';

export interface StatusInput {
  record: RolloutRecord;
  /** Where the record lives. */
  namespace: string;
  /** The plan's lease; undefined when there is none. */
  lock?: LeaseView;
  /** The plan file as the user named it, for the commands we suggest. */
  planFile?: string;
  now: Date;
}

const pods = (n: number): string => `${n} pod${n === 1 ? '' : 's'}`;
const since = (iso: string, now: Date): number => now.getTime() - Date.parse(iso);
// Ages (how long ago, for how long so far) in whole seconds: `45s`, then formatDuration's `1m02s`.
const age = (ms: number): string => (ms < 60_000 ? `${Math.max(0, Math.round(ms / 1000))}s` : formatDuration(ms));
const ago = (iso: string, now: Date): string => `${age(since(iso, now))} ago`;

const TERMINAL = new Set(['Completed', 'Partial', 'RolledBack', 'Halted']);

function waitLine(w: Waiting, r: RolloutRecord, input: StatusInput): string {
  const gate = w.gate ? ` (gate ${w.gate})` : '';
  const left = w.until ? formatDuration(Date.parse(w.until) - input.now.getTime()) : undefined;
  switch (w.kind) {
    case 'pause':
      return `paused after wave ${w.wave}${gate}: ${left} left (until ${w.until})`;
    case 'window':
      return `waiting for the window before wave ${w.wave}: opens in ${left} (at ${w.until})`;
    case 'paused':
      return `paused by ${w.by ?? 'someone'} for ${age(since(w.since, input.now))}: no new pod starts; run \`kwave resume ${input.planFile ?? r.plan}\` to go on`;
    case 'approval': {
      const next = w.wave + 1 <= r.waves ? ` before wave ${w.wave + 1}` : '';
      return `waiting for approval of wave ${w.wave}${gate}${next} for ${age(since(w.since, input.now))}: run \`kwave approve ${input.planFile ?? r.plan} --wave ${w.wave}\``;
    }
  }
}

/** Left-aligned columns, two spaces apart, each row indented. */
function table(rows: string[][], indent = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
  );
}

/** The status as lines of text for a person. */
export function renderStatus(input: StatusInput): string {
  const { record: r, now } = input;
  const c = r.counts;
  const lines: string[] = [];
  lines.push(`plan ${r.plan} (revision ${r.revision}, ${r.direction}) in namespace ${input.namespace}: ${r.phase}`);
  const waveText = r.wave === 0 ? `wave 0 of ${r.waves} (not started)` : `wave ${r.wave} of ${r.waves}`;
  const timing = r.endedAt
    ? `started ${ago(r.startedAt, now)}, ended ${ago(r.endedAt, now)} after ${formatDuration(Date.parse(r.endedAt) - Date.parse(r.startedAt))}`
    : `started ${ago(r.startedAt, now)}, updated ${ago(r.updatedAt, now)}`;
  lines.push(`${waveText} · ${timing}`);
  const deferred = r.deferred > 0 ? `, ${r.deferred} left for a later plan` : '';
  lines.push(
    `pods: ${c.upgraded} ${r.direction === 'rollback' ? 'reverted' : 'upgraded'}, ${c.in_progress} in progress, ${c.pending} pending, ` +
      `${c.failed} failed, ${c.skipped} skipped, ${c.vanished} vanished (${r.selected} selected${deferred})`,
  );
  if (r.rollback)
    lines.push(
      `rollback (${r.rollback.scope}): ${r.rollback.done} of ${r.rollback.pods} reverted, ${r.rollback.failed} failed`,
    );
  if (r.waiting) lines.push(waitLine(r.waiting, r, input));
  if (r.heldByPdb)
    lines.push(
      `held by PodDisruptionBudget ${r.heldByPdb.pdb} for ${age(since(r.heldByPdb.since, now))}: ${r.heldByPdb.pod} waits (${r.heldByPdb.message})`,
    );
  if (r.message) lines.push(`${TERMINAL.has(r.phase) || r.phase === 'Paused' ? 'result' : 'note'}: ${r.message}`);

  if (r.inFlight.length > 0) {
    const all = r.inFlightCount ?? r.inFlight.length;
    lines.push(`in flight (${all > r.inFlight.length ? `${all}, the ${r.inFlight.length} longest shown` : all}):`);
    lines.push(...table(r.inFlight.map((p) => [p.pod, `wave ${p.wave}`, p.step, age(since(p.since, now))])));
  }
  if (r.waitingForNodes && r.waitingForNodes.length > 0) {
    lines.push(`${r.endedAt ? 'left for their node' : 'waiting for their node'} (${r.waitingForNodes.length}):`);
    lines.push(...table(r.waitingForNodes.map((w) => [w.pod, `waiting: ${nodeWaitNow(w, now.getTime())}`])));
  }
  if (r.failures.length > 0) {
    const shown =
      r.failuresTotal > r.failures.length
        ? `${r.failures.length} latest of ${r.failuresTotal}`
        : String(r.failures.length);
    lines.push(`failures (${shown}):`);
    lines.push(...table(r.failures.map((f) => [f.pod, `wave ${f.wave}`, f.reason, f.message])));
  }
  if (r.gates.length > 0) {
    lines.push('gates:');
    lines.push(...table(r.gates.map((g) => [`after wave ${g.wave}`, g.gate, gateResultText(g), g.message])));
    lines.push(...measurementLines(r.gates[r.gates.length - 1]!));
  }
  const control = r.control;
  if (control?.paused && r.waiting?.kind !== 'paused')
    lines.push(
      `pause requested by ${control.paused.by} ${ago(control.paused.at, now)} (a run of revision ${control.paused.revision ?? 'any'} waits for \`kwave resume\`)`,
    );
  if (control && control.history.length > 0) {
    lines.push('control:');
    lines.push(
      ...table(
        control.history.slice(-5).map((c) => [c.at, c.action, `by ${c.by}`, c.holder ? `runner ${c.holder}` : '']),
      ),
    );
  }
  const approvals = Object.entries(r.approvals).sort(([a], [b]) => Number(a) - Number(b));
  if (approvals.length > 0) {
    lines.push('approvals:');
    lines.push(...table(approvals.map(([wave, a]) => [`wave ${wave}`, `by ${a.by}`, `${ago(a.at, now)}`])));
  }
  if (r.waveSummaries.length > 0) {
    lines.push('waves:');
    lines.push(
      ...table(
        r.waveSummaries.map((s) => [
          `wave ${s.wave}`,
          pods(s.pods),
          `${s.upgraded} upgraded`,
          `${s.failed} failed`,
          `${s.vanished} vanished`,
          s.durationMs === undefined ? '-' : formatDuration(s.durationMs),
        ]),
      ),
    );
  }
  lines.push(`lock: ${lockLine(input.lock, now)}`);
  if (r.trimmed) lines.push(`left out to fit the ConfigMap: ${r.trimmed.join(', ')}`);
  const recent = r.history.slice(-5);
  if (recent.length > 0) {
    lines.push('recent:');
    lines.push(...table(recent.map((h) => [h.time, h.message])));
  }
  return lines.join('\n');
}

function gateResultText(g: GateRecord): string {
  if (g.wouldHave)
    return `${g.result} (dry run: would have ${g.wouldHave.result === 'failed' ? 'failed' : 'been inconclusive'})`;
  return g.dryRun ? `${g.result} (dry run)` : g.result;
}

/** Every measurement of the newest gate (the one running, or the last one checked): when, value, phase and why. */
function measurementLines(g: GateRecord): string[] {
  const ms = g.measurements ?? [];
  if (ms.length === 0) return [];
  const of = ms[ms.length - 1]!.count;
  const shown = ms[0]!.index > 1 ? `, the last ${ms.length}` : '';
  const out = [
    `measurements of gate ${g.gate} after wave ${g.wave}${g.dryRun ? ' (dry run)' : ''} (${ms[ms.length - 1]!.index} of ${of}${shown}):`,
  ];
  out.push(...table(ms.map((m) => [`${m.index}`, m.at, `value ${measuredText(m)}`, m.phase, m.message])));
  return out;
}

function measuredText({ value: v, valuesLeftOut }: GateMeasurement): string {
  if (v === null || v === undefined) return '-';
  if (!Array.isArray(v)) return String(v);
  return `[${v.join(', ')}${valuesLeftOut ? `, … ${v.length + valuesLeftOut} values` : ''}]`;
}

function lockLine(lock: LeaseView | undefined, now: Date): string {
  if (!lock || !lock.holder) return 'free (no runner)';
  return lock.expired ? `free: ${describeHolder(lock, now)}` : `held by ${describeHolder(lock, now)}`;
}

/** `-o json`: the record, with where it lives and who holds the lock. */
export function statusJson(input: StatusInput): Record<string, unknown> {
  const lock = input.lock?.holder
    ? {
        holder: input.lock.holder,
        renewedAt: input.lock.renewedAt?.toISOString(),
        durationSeconds: input.lock.durationSeconds,
        expired: input.lock.expired,
      }
    : null;
  const waits = input.record.waitingForNodes?.map((w) => ({ ...w, waiting: nodeWaitNow(w, input.now.getTime()) }));
  return { ...input.record, ...(waits ? { waitingForNodes: waits } : {}), namespace: input.namespace, lock };
}

/** `node sim-node-2 is NotReady since 12s`, its age counted to `now` rather than to when it was recorded. */
function nodeWaitNow(w: NodeWait, now: number): string {
  const since = w.since === undefined ? Number.NaN : Date.parse(w.since);
  return Number.isNaN(since) ? w.message : w.message.replace(/ since \S+$/, ` since ${formatAge(now - since)}`);
}
