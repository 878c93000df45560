// The last line(s) of a multi-cluster run: every cluster's phase and message, and the plan's exit code.
import type { ClusterEnd } from '../../session/runPlan.js';
import type { Plan } from '../../plan/types.js';
import type { CommandContext } from '../context.js';

export function writePlanEnd(ctx: CommandContext, plan: Plan, ends: readonly ClusterEnd[], exitCode: number): void {
  const clusters = ends.map((e) => ({ cluster: e.cluster!, phase: e.phase, exitCode: e.exitCode, message: e.message }));
  if (ctx.common.output === 'json') {
    ctx.io.stdout.write(
      JSON.stringify({
        time: new Date().toISOString(),
        plan: plan.name,
        event: 'plan-end',
        clusterOrder: plan.clusters!.order,
        exitCode,
        clusters,
      }) + '\n',
    );
    return;
  }
  const lines = clusters.map((c) => `  ${c.cluster}: ${c.phase}: ${c.message}`);
  ctx.io.stdout.write(
    `plan ${plan.name} across ${clusters.length} clusters (${plan.clusters!.order}), exit ${exitCode}:\n${lines.join('\n')}\n`,
  );
}
