// Whether a halt still stands for a plan revision, so that a run of it upgrades nothing. Pure:
// from the rollout record and the lease alone.
//
// A halted revision stays halted (no pod is patched twice; docs/rollout.md, "Re-runs and halted
// revisions"): a later `kwave run` of it —
// a restart of a killed run, a Job's retry, a second runner that started late, tonight's CronJob —
// carries the halt on: pods the halt left in flight finish, its rollback is completed, nothing is
// upgraded, exit 3. Only `kwave run --retry` upgrades the failed pods of a halt that ended again.
// Even then a run killed after it recorded its end but before it let go of the lease is carried
// on: a run ends by recording its end and then releasing the lease, so a lease taken over from
// the very holder that recorded the end means that run died in between — this is its restart.
import { ExitCode } from '../errors.js';
import type { Plan } from '../plan/types.js';
import type { UnfinishedHalt } from '../rollout/runnerDeps.js';
import type { RolloutRecord } from './record.js';

export interface StandingHalt {
  halt: UnfinishedHalt;
  /** `unfinished`: the halted run died before it ended; `died-before-release`: after it recorded its end; `ended`: it ended. */
  how: 'unfinished' | 'died-before-release' | 'ended';
}

export interface StandingHaltOptions {
  /** `--retry`: a halt that ended no longer stands. */
  retry?: boolean;
  /** The holder of the lease this run took over without its release (dead or expired), if any. */
  abandonedBy?: string;
}

/** The halt that stands for `plan`'s revision according to `record`, or undefined. */
export function standingHalt(
  record: RolloutRecord | undefined,
  plan: Pick<Plan, 'name' | 'revision' | 'failurePolicy'>,
  options: StandingHaltOptions = {},
): StandingHalt | undefined {
  if (!record || record.plan !== plan.name || record.revision !== plan.revision || record.direction !== 'upgrade')
    return undefined;
  const ended = record.endedAt !== undefined || record.exitCode !== undefined;
  let how: StandingHalt['how'];
  if (!ended) {
    if (record.phase !== 'Halted') return undefined;
    how = 'unfinished';
  } else {
    if (record.exitCode !== ExitCode.HALTED) return undefined;
    if (options.abandonedBy !== undefined && record.holder === options.abandonedBy) how = 'died-before-release';
    else if (options.retry) return undefined;
    else how = 'ended';
  }
  // A node that stopped acting is not the image's failure unless the plan counts it (as the runner does).
  const failed = record.failures
    .filter((f) => f.reason !== 'NodeNotReady' || plan.failurePolicy.countNodeFailures)
    .map((f) => f.pod);
  return {
    how,
    halt: { message: record.message ?? 'halted by an earlier run', wave: record.wave, failed: [...new Set(failed)] },
  };
}
