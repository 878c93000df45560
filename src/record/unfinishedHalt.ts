// Whether the last run of a plan revision halted and died before it was over (killed while its
// in-flight pods finished or its rollback ran, or after it recorded its end but before it let
// go of the plan's lease). Pure: from the rollout record and the lease alone.
//
// The record is the witness: pods a halt rolled back carry this revision's rollback state,
// exactly as after a halted run that ended; a deliberate re-run of such a plan upgrades them
// again (README), while a restart of the killed run must carry the halt on instead. A run ends
// by recording its end and then releasing the lease, so a lease taken over from the very holder
// that recorded the end means that run died in between: a restart (a Job's retry), not a re-run.
import { ExitCode } from '../errors.js';
import type { Plan } from '../plan/types.js';
import type { UnfinishedHalt } from '../rollout/runnerDeps.js';
import type { RolloutRecord } from './record.js';

/**
 * The halt `record` says is under way for `plan`'s revision, or undefined (none, or that run
 * ended and let go). `abandonedBy`: the holder of the lease this run took over without its
 * release (dead or expired), if any.
 */
export function unfinishedHalt(record: RolloutRecord | undefined, plan: Pick<Plan, 'name' | 'revision' | 'failurePolicy'>, abandonedBy?: string): UnfinishedHalt | undefined {
  if (!record || record.plan !== plan.name || record.revision !== plan.revision || record.direction !== 'upgrade') return undefined;
  const ended = record.endedAt !== undefined || record.exitCode !== undefined;
  if (ended ? record.exitCode !== ExitCode.HALTED || abandonedBy === undefined || record.holder !== abandonedBy : record.phase !== 'Halted') return undefined;
  // A node that stopped acting is not the image's failure unless the plan counts it (as the runner does).
  const failed = record.failures.filter((f) => f.reason !== 'NodeNotReady' || plan.failurePolicy.countNodeFailures).map((f) => f.pod);
  return { message: record.message ?? 'halted by an earlier run', wave: record.wave, failed: [...new Set(failed)] };
}
