// The record's bounded history: which events a person reading `kwave status` wants kept, and the
// line each one is told in. Pure.
import { formatDuration } from '../durationText.js';
import type { RolloutEvent } from '../rollout/events.js';
import { clip } from './bounds.js';
import { keepLast, LIMITS, type HistoryEntry, type RolloutRecord } from './record.js';

/** One line telling `e` (also the record's message of a pause). */
export function describeEvent(e: RolloutEvent): string {
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
    case 'pod-waiting':
      return `${e.pod} waiting: ${e.message}`;
    case 'pdb-wait':
      return `${e.pod} held by ${e.message}`;
    case 'prepull-start':
      return `wave ${e.wave}: pre-pulling the target images on the nodes of ${e.pods} pod${e.pods === 1 ? '' : 's'}`;
    case 'prepull-end':
      return e.ok
        ? `wave ${e.wave}: images pulled on ${e.pulled.length} node${e.pulled.length === 1 ? '' : 's'} (${e.skipped.length} had them)`
        : `wave ${e.wave}: ${e.message ?? 'pre-pull failed'}`;
    case 'wave-end':
      return `wave ${e.wave} ended: ${e.summary.upgraded} upgraded, ${e.summary.failed} failed, ${e.summary.vanished} vanished of ${e.summary.pods}`;
    case 'gate-start':
      return `gate ${e.gate} after wave ${e.wave} started`;
    case 'gate-pause':
      return `gate ${e.gate}: pausing ${formatDuration(e.msLeft)}`;
    case 'gate-approval-wait':
      return `gate ${e.gate}: waiting for approval of wave ${e.wave} (kwave approve PLAN_FILE --wave ${e.wave})`;
    case 'gate-measurement':
      return `gate ${e.gate}: measurement ${e.index} of ${e.count}: ${e.message}`;
    case 'gate-end':
      return `gate ${e.gate} ${e.result}${e.wouldHave ? ' (dry run)' : ''}${e.message ? `: ${e.message}` : ''}`;
    case 'window-wait':
      return `waiting for the window: opens at ${e.opensAt}`;
    case 'halt':
      return `halted (${e.reason}): ${e.message}`;
    case 'rollback-start':
      return `rolling back ${e.pods} pod${e.pods === 1 ? '' : 's'} (${e.scope})`;
    case 'interrupt':
      return e.message;
    case 'paused':
      return `paused by ${e.by} (kwave pause at ${e.at}): no new pod starts; ${e.inFlight} pod${e.inFlight === 1 ? '' : 's'} in flight finish${e.inFlight === 1 ? 'es' : ''}`;
    case 'resumed':
      return `resumed by ${e.by} (kwave resume at ${e.at})`;
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
    case 'pdb-wait':
    case 'gate-pause':
    case 'window-wait':
      // Repeated countdowns: one line per wait.
      return last?.event !== e.event;
    default:
      return true;
  }
}

/** `record` with `e` appended to its history when it is worth keeping. */
export function withHistory(record: RolloutRecord, e: RolloutEvent): RolloutRecord {
  const last = record.history[record.history.length - 1];
  if (!historyWorthy(e, last)) return record;
  return {
    ...record,
    history: keepLast(
      [...record.history, { time: e.time, event: e.event, message: clip(describeEvent(e)) }],
      LIMITS.history,
    ),
  };
}
