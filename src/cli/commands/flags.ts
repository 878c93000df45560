// Parsing of flag values shared by several commands.
import { ExitCode, KwaveError } from '../../errors.js';
import { parseDuration } from '../../plan/duration.js';

/** A duration flag (`10s`, `2m`) → ms; undefined when not given. */
export function parseDurationFlag(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined)
    throw new KwaveError(
      'USAGE',
      `${flag}: expected a duration like "10s" or "0s", found "${String(value)}"`,
      ExitCode.BAD_INPUT,
    );
  return ms;
}

/** `--metrics-linger 10s` → ms; undefined when not given. */
export function parseLinger(value: unknown): number | undefined {
  return parseDurationFlag(value, '--metrics-linger');
}
