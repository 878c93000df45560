// The built `kwave` CLI the e2e suites run (`node bin/kwave.js` → dist/), refused when dist/ is
// older than src/ (scripts/run-tests.mjs builds it first; a bare `node --test` fails here loudly
// instead of testing yesterday's build), and the limit every spawned kwave process gets.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleSource } from '../../../scripts/stale-dist.mjs';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BIN = join(ROOT, 'bin/kwave.js');

const stale = staleSource(ROOT);
if (stale)
  throw new Error(
    `dist/ is older than ${stale}: run \`npm run build\` (npm test and scripts/run-tests.mjs build it themselves)`,
  );

/** A kwave child still running after this is killed, so a hang fails its test instead of the run. */
export const KWAVE_TIMEOUT_MS = 4 * 60_000;

/** For every spawn/execFile of kwave: the timeout above, ended with SIGKILL (a hung process may ignore SIGTERM). */
export const CHILD_LIMITS = { timeout: KWAVE_TIMEOUT_MS, killSignal: 'SIGKILL' } as const;
