import type { CommandContext } from '../context.js';
import { run as notBuilt } from './notBuilt.js';

export async function run(ctx: CommandContext, args: string[], opts: Record<string, unknown>): Promise<number> {
  return notBuilt(ctx, args, opts);
}
