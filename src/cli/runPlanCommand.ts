// `kwave run`, `kwave rollback` and the demo: the session's runPlan (session/runPlan.ts) with the
// common flags as its connection and metrics, the terminal reporter as each cluster's sink, and a
// multi-cluster plan's last lines written at its end.
import { KwaveError } from '../errors.js';
import type { Plan } from '../plan/types.js';
import { runPlan, type RunPlanOptions } from '../session/runPlan.js';
import type { CommandContext } from './context.js';
import { createReporter, type Reporter } from './output/index.js';
import { writePlanEnd } from './output/planEnd.js';

export interface RunPlanCommandOptions extends Pick<
  RunPlanOptions,
  'direction' | 'force' | 'retry' | 'metricsLingerMs' | 'leaseWaitMs' | 'signals' | 'onMetricsUrl'
> {
  plan: Plan;
  /** The plan file as the user named it (for hints in the output). */
  planFile: string;
}

/** Runs (or rolls back) a plan against the cluster the common flags name, or the plan's clusters; returns the exit code. */
export async function runPlanCommand(ctx: CommandContext, options: RunPlanCommandOptions): Promise<number> {
  const { io, common } = ctx;
  const { plan, planFile, ...rest } = options;
  const multi = plan.clusters;
  if (multi && common.context !== undefined)
    throw new KwaveError(
      'USAGE',
      `--context: the plan names its clusters' contexts (spec.clusters: ${multi.list.map((c) => c.context).join(', ')}); leave --context out`,
    );
  const tty = common.output === 'text' && io.stdout.isTTY === true && !multi;
  const reporters: Reporter[] = [];
  return runPlan(plan, {
    ...rest,
    connection: common,
    io,
    metricsAddress: common.metricsAddress,
    ...(common.pushgateway === undefined ? {} : { pushgateway: common.pushgateway }),
    sinks: (cluster) => {
      const reporter = createReporter({
        io,
        format: common.output,
        tty,
        plan: plan.name,
        planFile,
        ...(cluster === undefined ? {} : { cluster }),
      });
      reporters.push(reporter);
      return reporter;
    },
    onEnd: (ends, exitCode) => {
      if (!multi) return;
      for (const r of reporters) r.flush();
      writePlanEnd(ctx, plan, ends, exitCode);
    },
  });
}
