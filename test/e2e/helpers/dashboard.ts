// `kwave dashboard` for the e2e suites: the built CLI as a child process (its URL read from its
// first line), and Debian's chromium driven headless by playwright-core with the system
// browser's path (nothing downloads a browser). Screenshots go under the test output folder,
// KWAVE_TEST_OUTPUT or test-output/ of the repo.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { findOnPath } from '../../../src/cli/prometheusProcess.js';
import { BIN, CHILD_LIMITS, ROOT } from './kwaveBin.js';

/** Where the suites write what a person looks at afterwards (screenshots). */
export function testOutput(...parts: string[]): string {
  const dir = join(process.env.KWAVE_TEST_OUTPUT ?? join(ROOT, 'test-output'), ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function chromiumPath(): string | undefined {
  return process.env.KWAVE_CHROMIUM ?? findOnPath('chromium') ?? findOnPath('chromium-browser');
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no chromium on PATH');
  // --no-sandbox: CI runs as root, where chromium refuses its sandbox.
  return chromium.launch({ executablePath, args: ['--no-sandbox'] });
}

export interface RunningDashboard {
  child: ChildProcess;
  url: string;
  stderr(): string;
  stop(): Promise<number | null>;
}

/** `kwave dashboard --kubeconfig K ARGS` on a free loopback port; resolves once it serves. */
export function startDashboard(kubeconfig: string, args: string[] = []): Promise<RunningDashboard> {
  const child = spawn(
    process.execPath,
    [BIN, 'dashboard', '--kubeconfig', kubeconfig, '--address', '127.0.0.1:0', ...args],
    { cwd: ROOT, env: { ...process.env, KUBECONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'], ...CHILD_LIMITS },
  );
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += String(c)));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += String(c);
      const url = / on (http:\/\/\S+)/.exec(out)?.[1];
      if (url)
        resolve({
          child,
          url,
          stderr: () => err,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
    });
    void exited.then((code) => reject(new Error(`kwave dashboard exited (${code}) before serving:\n${out}\n${err}`)));
  });
}
