// Which of the runner's events become notifications (`spec.notify[].on`), and the one summary line
// each says. Pure: events in, notifications out; the notifier (notifier.ts) sends them.
//
//   started         rollout-start
//   wave-completed  wave-end
//   gate            gate-end (passed, failed, inconclusive; an interrupted gate says nothing)
//   halted          halt, at once, with the reason (the rollback, if any, follows)
//   completed       rollout-end of an upgrade that did not halt and was not interrupted
//                   (phase Completed, or Partial: the body says which, and the exit code)
//   rolled-back     rollout-end of a run that rolled pods back (after a halt, or `kwave rollback`)
//
// A run that ends interrupted (Paused, exit 4) or halted without a rollback sends no end
// notification: nothing finished, or `halted` already said why.
import type { NotifyEventKind } from '../plan/types.js';
import type { RolloutEvent } from '../rollout/events.js';

export interface Notification {
  kind: NotifyEventKind;
  plan: string;
  revision: string;
  /** ISO time of the event. */
  time: string;
  /** One line for a person: `wave 2 of 4 completed: 9 upgraded, 0 failed of 9 pods`. */
  summary: string;
  /** Whether it reports trouble (a halt, a failed gate, failed pods): chat formats mark it. */
  severity: 'info' | 'warning' | 'error';
  /** The runner's event it came from, as `-o json` prints it. */
  event: RolloutEvent;
}

/** What a run has shown so far that decides how its end is reported. */
export interface RunSoFar {
  /** A rollback started in this run (after a halt, or `kwave rollback`). */
  rollingBack: boolean;
}

export const runStart = (): RunSoFar => ({ rollingBack: false });

/** The run so far, after `event`. */
export function advance(run: RunSoFar, event: RolloutEvent): RunSoFar {
  if (event.event === 'rollback-start' || (event.event === 'rollout-start' && event.direction === 'rollback'))
    return { rollingBack: true };
  if (event.event === 'rollout-start') return { rollingBack: false };
  return run;
}

const pods = (n: number) => `${n} pod${n === 1 ? '' : 's'}`;

/** The notification `event` makes (seen after `run`), or undefined when it makes none. */
export function notificationOf(event: RolloutEvent, run: RunSoFar, revision: string): Notification | undefined {
  const base = { plan: event.plan, revision, time: event.time, event };
  switch (event.event) {
    case 'rollout-start': {
      const verb = event.direction === 'rollback' ? 'rollback' : event.resumed ? 'resumed' : 'started';
      const summary =
        event.direction === 'rollback'
          ? `rollback of plan ${event.plan} started: revision ${event.revision}`
          : `rollout of plan ${event.plan} ${verb}: revision ${event.revision}, ${pods(event.selected)} selected, ${event.alreadyDone} already done, ${event.waves} wave${event.waves === 1 ? '' : 's'}`;
      return { ...base, kind: 'started', summary, severity: 'info' };
    }
    case 'wave-end': {
      const s = event.summary;
      const trouble = s.failed > 0 || s.vanished > 0;
      const summary = `wave ${s.wave} of plan ${event.plan} completed: ${s.upgraded} upgraded, ${s.failed} failed, ${s.vanished} vanished of ${pods(s.pods)}`;
      return { ...base, kind: 'wave-completed', summary, severity: trouble ? 'warning' : 'info' };
    }
    case 'gate-end': {
      if (event.result === 'interrupted') return undefined;
      const summary = `gate ${event.gate} after wave ${event.wave} of plan ${event.plan} ${event.result}${event.message ? `: ${event.message}` : ''}`;
      return { ...base, kind: 'gate', summary, severity: event.result === 'passed' ? 'info' : 'error' };
    }
    case 'halt':
      return {
        ...base,
        kind: 'halted',
        summary: `plan ${event.plan} halted in wave ${event.wave} (${event.reason}): ${event.message}`,
        severity: 'error',
      };
    case 'rollout-end': {
      if (run.rollingBack)
        return {
          ...base,
          kind: 'rolled-back',
          summary: `plan ${event.plan} ${event.phase}: ${event.message}`,
          severity: event.exitCode === 0 ? 'info' : 'warning',
        };
      if (event.exitCode !== 0 && event.phase !== 'Partial') return undefined;
      return {
        ...base,
        kind: 'completed',
        summary: `plan ${event.plan} ${event.phase}: ${event.message}`,
        severity: event.exitCode === 0 ? 'info' : 'warning',
      };
    }
    default:
      return undefined;
  }
}
