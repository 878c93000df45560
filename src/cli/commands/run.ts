// `kwave run PLAN`: carries out a plan, from wherever the cluster stands.
import { ExitCode } from '../../errors.js';
import type { CommandContext } from '../context.js';
import { loadPlanOrReport } from '../loadPlan.js';
import { runPlanCommand } from '../runPlanCommand.js';
import { parseDurationFlag, parseLinger } from './flags.js';

export async function run(ctx: CommandContext, args: string[], opts: Record<string, unknown>): Promise<number> {
  const file = args[0]!;
  const plan = await loadPlanOrReport(ctx, file);
  if (!plan) return ExitCode.BAD_INPUT;
  return runPlanCommand(ctx, {
    plan,
    planFile: file,
    direction: 'upgrade',
    force: opts.force === true,
    retry: opts.retry === true,
    metricsLingerMs: parseLinger(opts.metricsLinger),
    leaseWaitMs: parseDurationFlag(opts.leaseWait, '--lease-wait'),
  });
}
