// One readable line per rollout event, for text output off a TTY (logs, CI) and for the notable
// events a TTY prints above its progress bars. Pure given the event sequence: throttling uses
// the events' own times, never the wall clock.
import type { RolloutEvent } from '../../rollout/events.js';
import type { PodResult } from '../../rollout/podEnd.js';
import { clockTime, count, formatDuration, nameList } from './text.js';
import { summaryTable } from './summary.js';

export interface LineOptions {
  /** Also print pod-start and pod-step events (off a TTY; a line per step of every pod). */
  verbose?: boolean;
  /** How to tell a person to approve a wave, e.g. `kwave approve plans/web.yaml --wave 2`. */
  approveHint?: (wave: number) => string;
}

/** Budget waits repeat while pods hold the budget: say so on a new wait, at most this often… */
const BUDGET_NEW_WAIT_MS = 10_000;
/** …and remind at most this often during a long one. */
const BUDGET_REMIND_MS = 30_000;

const POD_VERB: Record<PodResult, string> = {
  upgraded: 'upgraded',
  'rolled-back': 'rolled back',
  failed: 'FAILED',
  vanished: 'vanished',
  skipped: 'skipped',
  refused: 'refused',
  foreign: 'left alone',
  aborted: 'aborted',
};

/** Results a person must notice even while bars are drawn. */
const NOTABLE_RESULTS = new Set<PodResult>(['failed', 'vanished', 'refused', 'foreign', 'aborted', 'rolled-back']);

function valueText(value: unknown): string {
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)));
  if (value === undefined) return 'no value';
  const s = JSON.stringify(value);
  return s.length > 60 ? s.slice(0, 59) + '…' : s;
}

/**
 * Turns events into lines. Keeps only what a line needs from earlier events (the number of
 * waves, when the last budget wait was printed, which gate waits were announced).
 */
export class EventLines {
  private waveCount = 0;
  private lastBudgetMs = Number.NEGATIVE_INFINITY;
  private budgetWaitOpen = false;
  private readonly announced = new Set<string>();

  constructor(private readonly options: LineOptions = {}) {}

  /** Plain-text mode: the lines for this event (often one, none for throttled or quiet events). */
  plain(event: RolloutEvent): string[] {
    return this.lines(event, false);
  }

  /** TTY mode: a line only for events worth keeping in the scrollback above the bars. */
  notable(event: RolloutEvent): string[] {
    return this.lines(event, true);
  }

  private lines(event: RolloutEvent, tty: boolean): string[] {
    const text = this.describe(event, tty);
    if (text === undefined) return [];
    const line = this.prefix(event) + text;
    // The end: the table of waves, then the outcome.
    if (event.event === 'rollout-end')
      return event.waves.length > 0 ? ['', ...summaryTable(event.waves), line] : [line];
    return [line];
  }

  private prefix(event: RolloutEvent): string {
    return `${clockTime(event.time)} ${event.plan} `;
  }

  private wave(n: number): string {
    return this.waveCount > 0 ? `wave ${n}/${this.waveCount}` : `wave ${n}`;
  }

  /** Once per key: repeated waits (pause ticks, approval, window) are announced when they begin. */
  private once(key: string): boolean {
    if (this.announced.has(key)) return false;
    this.announced.add(key);
    return true;
  }

  private describe(e: RolloutEvent, tty: boolean): string | undefined {
    const t = Date.parse(e.time);
    switch (e.event) {
      case 'rollout-start': {
        this.waveCount = e.waves;
        const what = e.direction === 'upgrade' ? 'rollout' : 'rollback';
        const notes = [
          e.alreadyDone > 0 ? `${e.alreadyDone} already at target` : '',
          e.deferred > 0 ? `${e.deferred} deferred to a later plan` : '',
        ]
          .filter(Boolean)
          .join(', ');
        // Kept short enough for one 80-column line on a TTY; logs also get the revision.
        const head = `${what} ${e.resumed ? 'resumed' : 'started'}: ${count(e.selected, 'pod')}${notes ? ` (${notes})` : ''}, ${count(e.waves, 'wave')}, max ${e.budget} unavailable, ${e.concurrency} at a time`;
        return tty ? head : `${head}, revision ${e.revision}`;
      }
      case 'wave-start':
        if (e.waves > 0) this.waveCount = e.waves;
        this.budgetWaitOpen = false;
        return tty ? undefined : `${this.wave(e.wave)} started: ${count(e.pods, 'pod')} (target ${e.target})`;
      case 'pod-start':
        this.budgetWaitOpen = false;
        return !tty && this.options.verbose ? `pod ${e.pod} started` : undefined;
      case 'pod-step':
        return !tty && this.options.verbose ? `pod ${e.pod} ${e.step}: ${e.message}` : undefined;
      case 'pod-end': {
        if (tty && !NOTABLE_RESULTS.has(e.result)) return undefined;
        const verb = POD_VERB[e.result];
        const why = e.reason ? `${e.reason}: ${e.message}` : e.message;
        switch (e.result) {
          case 'upgraded':
          case 'rolled-back':
            return `pod ${e.pod} ${verb} in ${formatDuration(e.durationMs)}`;
          case 'skipped':
          case 'refused':
          case 'foreign':
            return `pod ${e.pod} ${verb}: ${why}`;
          default:
            return `pod ${e.pod} ${verb} after ${formatDuration(e.durationMs)}: ${why}`;
        }
      }
      case 'pod-waiting':
        return `pod ${e.pod} waiting: ${e.message}`;
      case 'pdb-wait':
        return tty ? undefined : `pod ${e.pod} waiting: held by ${e.message}`;
      case 'budget-wait': {
        if (tty) return undefined;
        const due = t - this.lastBudgetMs >= (this.budgetWaitOpen ? BUDGET_REMIND_MS : BUDGET_NEW_WAIT_MS);
        this.budgetWaitOpen = true;
        if (!due) return undefined;
        this.lastBudgetMs = t;
        const held = e.holders.length > 0 ? `: ${nameList(e.holders, 4)}` : '';
        return `waiting: ${e.unavailable}/${e.budget} pods unavailable (budget ${e.budget})${held}`;
      }
      case 'wave-end': {
        const s = e.summary;
        const took = s.durationMs === undefined ? '' : ` in ${formatDuration(s.durationMs)}`;
        const also = [s.failed > 0 ? `${s.failed} failed` : '', s.vanished > 0 ? `${s.vanished} vanished` : ''].filter(
          Boolean,
        );
        return `${this.wave(e.wave)} done${took}: ${s.upgraded}/${s.pods} upgraded${also.length > 0 ? `, ${also.join(', ')}` : ''}`;
      }
      case 'gate-start':
        return tty ? undefined : `gate ${e.gate} after ${this.wave(e.wave)}: checking`;
      case 'gate-pause':
        return !tty && this.once(`pause ${e.wave} ${e.gate}`)
          ? `gate ${e.gate}: pausing for ${formatDuration(e.msLeft)}`
          : undefined;
      case 'gate-approval-wait': {
        if (!this.once(`approval ${e.wave} ${e.gate}`)) return undefined;
        const hint = this.options.approveHint ? ` (${this.options.approveHint(e.wave)})` : '';
        return `gate ${e.gate}: waiting for approval of ${this.wave(e.wave)}${hint}`;
      }
      case 'gate-measurement':
        return `gate ${e.gate}: measurement ${e.index}/${e.count}: ${valueText(e.value)} (${e.phase})${e.message ? `: ${e.message}` : ''}`;
      case 'gate-end': {
        const result =
          e.result !== 'passed'
            ? e.result.toUpperCase()
            : e.wouldHave
              ? `passed (dry run, would have ${e.wouldHave.result === 'failed' ? 'FAILED' : 'been INCONCLUSIVE'})`
              : 'passed';
        return `gate ${e.gate} ${result}${e.message ? `: ${e.message}` : ''}`;
      }
      case 'window-wait':
        return this.once(`window ${e.wave}`)
          ? `the maintenance window is closed: ${this.wave(e.wave)} waits until it opens at ${e.opensAt} (in ${formatDuration(e.msLeft)})`
          : undefined;
      case 'halt':
        return `HALTED in ${this.wave(e.wave)}: ${e.message}`;
      case 'rollback-start':
        return e.forced
          ? `--force: rolling back ${count(e.pods, 'pod')} another revision of the plan left mid-flight`
          : `rolling back ${count(e.pods, 'pod')} (rollback: ${e.scope})`;
      case 'interrupt':
        return `interrupted: ${e.message}`;
      case 'paused':
        return `PAUSED by ${e.by} (kwave pause at ${e.at}): no new pod starts; ${count(e.inFlight, 'pod')} in flight finish; \`kwave resume\` goes on`;
      case 'resumed':
        return `resumed by ${e.by} (kwave resume at ${e.at})`;
      case 'prepull-start':
        return `${this.wave(e.wave)}: pre-pulling the target images on the nodes of ${count(e.pods, 'pod')}`;
      case 'prepull-end':
        return e.ok
          ? `${this.wave(e.wave)}: images pulled on ${count(e.pulled.length, 'node')} in ${formatDuration(e.durationMs)}${e.skipped.length > 0 ? ` (${count(e.skipped.length, 'node')} had them)` : ''}`
          : `${this.wave(e.wave)}: ${e.message ?? 'pre-pull failed'}`;
      case 'rollout-end':
        return `${e.phase} in ${formatDuration(e.durationMs)}${e.message ? `: ${e.message}` : ''}`;
      default:
        return undefined;
    }
  }
}
