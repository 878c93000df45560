// Whether the last run of a plan revision halted and died before it ended (killed while its
// in-flight pods finished or its rollback ran). Pure: from the rollout record alone.
//
// The record is the only witness: pods a halt rolled back carry this revision's rollback state,
// exactly as after a halted run that ended; a deliberate re-run of such a plan upgrades them
// again (README), while a restart of the killed run must carry the halt on instead.
import type { Plan } from '../plan/types.js';
import type { UnfinishedHalt } from '../rollout/runnerDeps.js';
import type { RolloutRecord } from './record.js';

/** The halt `record` says is under way for `plan`'s revision, or undefined (none, or that run ended). */
export function unfinishedHalt(record: RolloutRecord | undefined, plan: Pick<Plan, 'name' | 'revision' | 'failurePolicy'>): UnfinishedHalt | undefined {
  if (!record || record.plan !== plan.name || record.revision !== plan.revision) return undefined;
  if (record.direction !== 'upgrade' || record.phase !== 'Halted' || record.endedAt !== undefined || record.exitCode !== undefined) return undefined;
  // A node that stopped acting is not the image's failure unless the plan counts it (as the runner does).
  const failed = record.failures.filter((f) => f.reason !== 'NodeNotReady' || plan.failurePolicy.countNodeFailures).map((f) => f.pod);
  return { message: record.message ?? 'halted by an earlier run', wave: record.wave, failed: [...new Set(failed)] };
}
