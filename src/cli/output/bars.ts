// The three live lines a TTY shows during a rollout, rendered from ProgressState:
//
//   overall   ██████████░░░░░░░░░░  36/60 pods  60%  ETA 14s  1 failed
//   wave 3/4  ████░░░░░░░░░░░░░░░░   6/24  8s
//   in flight (5): demo-31 restarting, demo-32 draining, demo-40 patching, …
//
// Pure: `now` and the terminal width come in, strings go out; cli-progress only draws them.
import { clockTime, formatDuration, shortName, truncate } from './text.js';
import { atTarget, etaMs, goal, type ProgressState } from './progress.js';

export interface BarLines {
  overall: string;
  wave: string;
  status: string;
}

export interface BarOptions {
  /** How to tell a person to approve a wave. */
  approveHint?: (wave: number) => string;
}

const LABEL_WIDTH = 10;
const MIN_BAR = 10;
const MAX_BAR = 40;
/** Room kept right of the bars for the counts, so the bars keep one width as the text grows. */
const RIGHT_WIDTH = 40;

/** Short names of the pod flow's steps (src/inplace/decide.ts), for the status line. */
const STEP_NAMES: Record<string, string> = {
  'close-gate': 'closing gate',
  'wait-drain': 'draining',
  patch: 'patching',
  'wait-complete': 'restarting',
  'open-gate': 'opening gate',
  'wait-ready': 'readying',
  'wait-node': 'waiting for node',
};

function bar(fraction: number, width: number): string {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 1));
  const full = Math.round(f * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

function percent(value: number, total: number): string {
  return `${total === 0 ? 100 : Math.floor((value / total) * 100)}%`.padStart(4);
}

/** A pod in flight: its name, step, and its age once it has taken a while. */
function inFlightText(s: ProgressState, nowMs: number): string {
  if (s.inFlight.length === 0) return '';
  const pods = s.inFlight.map((p) => {
    const age = nowMs - p.sinceMs;
    const step = p.step ? ` ${STEP_NAMES[p.step] ?? p.step}` : '';
    return `${shortName(p.pod)}${step}${age >= 10_000 ? ` ${formatDuration(age)}` : ''}`;
  });
  return `in flight (${s.inFlight.length}): ${pods.join(', ')}`;
}

/** Pods waiting for their node: `waiting for nodes (2): demo-1 sim-node-2 12s, …`. */
function nodeWaitText(s: ProgressState, nowMs: number): string {
  if (s.nodeWaits.length === 0) return '';
  const pods = s.nodeWaits
    .slice(0, 3)
    .map(
      (w) =>
        `${shortName(w.pod)} ${w.node}${w.sinceMs === undefined ? '' : ` ${formatDuration(Math.max(0, nowMs - w.sinceMs))}`}`,
    );
  return `waiting for nodes (${s.nodeWaits.length}): ${pods.join(', ')}${s.nodeWaits.length > 3 ? ' …' : ''}`;
}

function waitingText(s: ProgressState, nowMs: number, options: BarOptions): string | undefined {
  const w = s.waiting;
  if (!w) return undefined;
  switch (w.kind) {
    case 'budget': {
      const who =
        w.holders.length > 0
          ? ` (${w.holders.slice(0, 3).map(shortName).join(', ')}${w.holders.length > 3 ? ' …' : ''})`
          : '';
      return `waiting for budget: ${w.unavailable}/${w.budget} unavailable${who}`;
    }
    case 'pdb':
      return `held by PodDisruptionBudget ${w.pdb}: ${shortName(w.pod)} waits`;
    case 'pause':
      return `pause ${w.gate} after wave ${w.wave}: ${formatDuration(Math.max(0, w.untilMs - nowMs))} left`;
    case 'approval':
      return `waiting for approval of wave ${w.wave} (gate ${w.gate})${options.approveHint ? `: ${options.approveHint(w.wave)}` : ''}`;
    case 'gate':
      return w.measurement
        ? `gate ${w.gate}: measurement ${w.measurement.index}/${w.measurement.count}`
        : `gate ${w.gate} after wave ${w.wave}: checking`;
    case 'paused':
      return `paused by ${w.by}: no new pod starts (kwave resume to go on)`;
    case 'window':
      return `maintenance window closed: opens at ${clockTime(w.opensAt)} (in ${formatDuration(Math.max(0, w.untilMs - nowMs))})`;
  }
}

function statusText(s: ProgressState, nowMs: number, options: BarOptions): string {
  const flight = [inFlightText(s, nowMs), nodeWaitText(s, nowMs)].filter(Boolean).join(' · ');
  const join = (...parts: (string | undefined)[]) => parts.filter(Boolean).join(' · ');
  if (s.end) return `${s.end.phase} in ${formatDuration(s.end.durationMs)}`;
  if (s.interrupted) return join('interrupted: finishing the pods in flight', flight);
  if (s.rollback) return join(`rolling back ${s.rolledBack + s.rollbackFailed}/${s.rollback.pods}`, flight);
  if (s.halt) return join('halted', flight);
  const waiting = waitingText(s, nowMs, options);
  if (waiting || flight) return join(waiting, flight);
  return s.startedMs === undefined ? 'starting' : '';
}

export function renderBars(s: ProgressState, nowMs: number, width: number, options: BarOptions = {}): BarLines {
  const usable = Math.max(40, width - 1);
  const total = goal(s);
  const value = atTarget(s);
  const eta = s.end ? undefined : etaMs(s);
  const counts = s.pods.counts;
  const countWidth = `${total}/${total} pods`.length;
  const overallRight = [
    `${String(value).padStart(String(total).length)}/${total} pods`.padEnd(countWidth),
    percent(value, total),
    eta !== undefined && value < total ? `ETA ${formatDuration(eta)}` : '',
    counts.failed > 0 ? `${counts.failed} failed` : '',
    counts.vanished > 0 ? `${counts.vanished} vanished` : '',
  ]
    .filter(Boolean)
    .join('  ');

  const w = s.wave;
  const waveLabel = w ? (s.waveCount > 0 ? `wave ${w.index}/${s.waveCount}` : `wave ${w.index}`) : 'wave';
  const waveElapsed = w ? formatDuration((w.endedMs ?? nowMs) - w.startedMs) : '';
  const waveRight = w
    ? [
        `${String(w.ended).padStart(String(total).length)}/${w.pods}`.padEnd(countWidth),
        percent(w.ended, w.pods),
        w.endedMs ? `done in ${waveElapsed}` : waveElapsed,
      ].join('  ')
    : 'not started';

  const barWidth = Math.max(MIN_BAR, Math.min(MAX_BAR, usable - LABEL_WIDTH - RIGHT_WIDTH - 2));
  const label = (text: string) => truncate(text, LABEL_WIDTH - 1).padEnd(LABEL_WIDTH);
  const overallLabel = s.direction === 'rollback' ? 'rollback' : 'overall';
  return {
    overall: truncate(
      `${label(overallLabel)}${bar(total === 0 ? 1 : value / total, barWidth)}  ${overallRight}`,
      usable,
    ),
    wave: truncate(`${label(waveLabel)}${bar(w ? w.ended / Math.max(1, w.pods) : 0, barWidth)}  ${waveRight}`, usable),
    status: truncate(statusText(s, nowMs, options), usable),
  };
}
