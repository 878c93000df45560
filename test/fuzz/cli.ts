// The real `kwave` binary (built into dist/ by `npm run build`, npm's pretest), for fuzz cases
// that must also hold end to end: exit code, stdout, stderr.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/kwave.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `kwave ARGS…` to its end (bounded by a generous timeout) with `env` over a clean one. */
export function runKwave(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
        timeout: 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(err);
        resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
      },
    );
  });
}
