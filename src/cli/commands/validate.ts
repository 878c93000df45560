// `kwave validate PLAN…`: load each plan and report (a folder stands for its .yaml/.yml files, so
// `kwave validate /plans` checks a mounted ConfigMap). Text: every error with its source line and a
// caret, or `OK file (plan NAME, revision R)`. JSON: one object per file per line.
// Exit 0 when every plan is valid, 2 otherwise.
import { ExitCode } from '../../errors.js';
import { loadPlanFile, type LoadResult } from '../../plan/load.js';
import type { CommandContext } from '../context.js';
import { planFailureJson, planFailureText } from '../loadPlan.js';
import { expandPlanArgs } from '../planFiles.js';

function jsonLine(file: string, result: LoadResult): string {
  if (result.ok) {
    return JSON.stringify({ file, valid: true, plan: result.plan.name, revision: result.plan.revision, errors: [] });
  }
  return planFailureJson(file, result);
}

function textBlock(file: string, result: LoadResult): string {
  if (result.ok) return `OK ${file} (plan ${result.plan.name}, revision ${result.plan.revision})`;
  return planFailureText(file, result);
}

export async function run(ctx: CommandContext, args: string[], _opts: Record<string, unknown>): Promise<number> {
  let allValid = true;
  const files = expandPlanArgs(args);
  if (files.length === 0) {
    ctx.io.stderr.write(`kwave: no plan files (.yaml, .yml) in ${args.join(', ')}\n`);
    return ExitCode.BAD_INPUT;
  }
  for (const file of files) {
    const result = await loadPlanFile(file);
    allValid &&= result.ok;
    const out = ctx.common.output === 'json' ? jsonLine(file, result) : textBlock(file, result);
    ctx.io.stdout.write(out + '\n');
  }
  return allValid ? ExitCode.OK : ExitCode.BAD_INPUT;
}
