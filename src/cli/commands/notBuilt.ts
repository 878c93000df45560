// Placeholder for commands whose issue has not landed yet: says so and exits 2.
import { ExitCode, KwaveError } from '../../errors.js';
import type { CommandContext } from '../context.js';

export async function run(_ctx: CommandContext, _args: string[], _opts: Record<string, unknown>): Promise<number> {
  throw new KwaveError('NOT_BUILT', 'this command is not built yet (see the open issues)', ExitCode.BAD_INPUT);
}
