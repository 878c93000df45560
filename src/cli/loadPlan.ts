// Loads a plan for a command; an invalid plan is shown as `kwave validate` shows it.
import { formatError } from '../errorText.js';
import { loadPlanFile } from '../plan/load.js';
import type { PlanError } from '../plan/planError.js';
import type { Plan } from '../plan/types.js';
import type { CommandContext } from './context.js';

/** A plan error in `-o json`: `{code, line, col, path, message}` (docs/errors.md). */
export function planErrorJson({ code, pos, message }: PlanError): object {
  return { code, line: pos.line, col: pos.col, path: pos.path, message };
}

/** The plan, or undefined after printing its errors (the command then exits 2). */
export async function loadPlanOrReport(ctx: CommandContext, file: string): Promise<Plan | undefined> {
  const { io, common } = ctx;
  const loaded = await loadPlanFile(file);
  if (loaded.ok) return loaded.plan;
  if (common.output === 'json') {
    const errors = loaded.errors.map(planErrorJson);
    io.stdout.write(JSON.stringify({ file, valid: false, errors }) + '\n');
  } else {
    const n = loaded.errors.length;
    io.stderr.write(
      [...loaded.errors.map((e) => formatError(e, loaded.text)), `FAIL ${file} (${n} error${n === 1 ? '' : 's'})`].join(
        '\n',
      ) + '\n',
    );
  }
  return undefined;
}
