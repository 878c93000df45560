// Loads a plan for a command; an invalid plan is shown as `kwave validate` shows it.
import { formatPlanError } from '../plan/formatPlanError.js';
import { loadPlanFile } from '../plan/load.js';
import type { Plan } from '../plan/types.js';
import type { CommandContext } from './context.js';

/** The plan, or undefined after printing its errors (the command then exits 2). */
export async function loadPlanOrReport(ctx: CommandContext, file: string): Promise<Plan | undefined> {
  const { io, common } = ctx;
  const loaded = await loadPlanFile(file);
  if (loaded.ok) return loaded.plan;
  if (common.output === 'json') {
    const errors = loaded.errors.map(({ line, col, path, message }) => ({ line, col, path, message }));
    io.stdout.write(JSON.stringify({ file, valid: false, errors }) + '\n');
  } else {
    const n = loaded.errors.length;
    io.stderr.write(
      [
        ...loaded.errors.map((e) => formatPlanError(e, loaded.text)),
        `FAIL ${file} (${n} error${n === 1 ? '' : 's'})`,
      ].join('\n') + '\n',
    );
  }
  return undefined;
}
