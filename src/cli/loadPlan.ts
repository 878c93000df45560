// Loads a plan for a command; an invalid plan is shown as `kwave validate` shows it.
import { formatErrors } from '../errorText.js';
import { loadPlanFile, type LoadResult } from '../plan/load.js';
import type { PlanError } from '../plan/planError.js';
import type { Plan } from '../plan/types.js';
import type { CommandContext } from './context.js';

type Failed = Extract<LoadResult, { ok: false }>;

/** A plan error in `-o json`: `{code, line, col, path, message}` (docs/errors.md). */
function planErrorJson({ code, pos, message }: PlanError): object {
  return { code, line: pos.line, col: pos.col, path: pos.path, message };
}

/** An invalid plan in `-o json`: `{file, valid: false, errors, moreErrors?}` (docs/plan-reference.md). */
export function planFailureJson(file: string, result: Failed): string {
  const more = result.moreErrors > 0 ? { moreErrors: result.moreErrors } : {};
  return JSON.stringify({ file, valid: false, errors: result.errors.map(planErrorJson), ...more });
}

/** An invalid plan as text: each error shown with its source line, then `FAIL file (N errors)`. */
export function planFailureText(file: string, result: Failed): string {
  const n = result.errors.length + result.moreErrors;
  const errors = formatErrors(result.errors, result.text, result.moreErrors);
  return [...errors, `FAIL ${file} (${n} error${n === 1 ? '' : 's'})`].join('\n');
}

/** The plan, or undefined after printing its errors (the command then exits 2). */
export async function loadPlanOrReport(ctx: CommandContext, file: string): Promise<Plan | undefined> {
  const { io, common } = ctx;
  const loaded = await loadPlanFile(file);
  if (loaded.ok) return loaded.plan;
  if (common.output === 'json') io.stdout.write(planFailureJson(file, loaded) + '\n');
  else io.stderr.write(planFailureText(file, loaded) + '\n');
  return undefined;
}
