// Starts a real Prometheus (or Pushgateway) as a child process, for `kwave demo --gate` and the
// tests: a free loopback port, a temporary config and storage directory, ready when /-/ready
// answers; stop() kills it and removes the directory. Part of the CLI (the demo), not of the
// library: src/index.ts does not export it.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** The executable's path on PATH, or undefined. */
export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

import { freePort } from '../sim/listen.js';
import { realSleep as sleep } from '../sleep.js';

export { freePort };

/** Polls `check` every `everyMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`,
      );
    await sleep(everyMs);
  }
}

interface Daemon {
  url: string;
  port: number;
  /** Everything it wrote to stderr and stdout, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

async function startDaemon(
  binary: string,
  args: (port: number, dir: string) => string[],
  dir: string,
): Promise<Daemon> {
  const path = findOnPath(binary);
  if (!path) throw new Error(`${binary} is not on PATH`);
  let lastFailure = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn(path, args(port, dir), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
    let exited = false;
    const exitedP = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
    const url = `http://127.0.0.1:${port}`;
    const stop = async () => {
      if (!exited) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exitedP;
        clearTimeout(killer);
      }
      await rm(dir, { recursive: true, force: true });
    };
    try {
      await waitFor(
        `${binary} on ${url} to be ready`,
        async () => {
          if (exited) throw new Error(`${binary} exited: ${output.slice(-2000)}`);
          const res = await fetch(`${url}/-/ready`);
          await res.text();
          return res.ok ? true : undefined;
        },
        30_000,
        200,
      );
      return { url, port, log: () => output, stop };
    } catch (err) {
      lastFailure = String(err);
      if (!exited) {
        child.kill('SIGKILL');
        await exitedP;
      }
      // Another process may have taken the port between freePort() and the bind: try again.
      if (!/address already in use/.test(output)) break;
    }
  }
  await rm(dir, { recursive: true, force: true });
  throw new Error(`could not start ${binary}: ${lastFailure}`);
}

export interface PrometheusServer extends Daemon {
  /** Runs an instant query; throws on a non-success answer. */
  query(promql: string): Promise<InstantResult>;
}

export interface InstantResult {
  resultType: 'vector' | 'scalar' | 'matrix' | 'string';
  result: unknown;
}

export interface StartPrometheusOptions {
  /** `host:port` targets scraped at /metrics under job `test`. */
  targets: string[];
  /** Seconds between scrapes (default 1). */
  scrapeIntervalSeconds?: number;
}

/** A real Prometheus scraping `targets` every second (job `kwave`), with its own temporary storage. */
export async function startPrometheus(options: StartPrometheusOptions): Promise<PrometheusServer> {
  const dir = await mkdtemp(join(tmpdir(), 'kwave-prom-'));
  const interval = `${options.scrapeIntervalSeconds ?? 1}s`;
  const config = [
    'global:',
    `  scrape_interval: ${interval}`,
    `  evaluation_interval: ${interval}`,
    'scrape_configs:',
    '  - job_name: kwave',
    `    scrape_timeout: ${interval}`,
    '    static_configs:',
    `      - targets: [${options.targets.map((t) => JSON.stringify(t)).join(', ')}]`,
    '',
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config);
  const daemon = await startDaemon(
    'prometheus',
    (port, d) => [
      `--config.file=${join(d, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(d, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-lifecycle',
      '--log.level=warn',
    ],
    dir,
  );
  return {
    ...daemon,
    async query(promql) {
      const res = await fetch(`${daemon.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as { status: string; error?: string; data?: InstantResult };
      if (body.status !== 'success' || !body.data)
        throw new Error(`query ${promql} failed: HTTP ${res.status} ${body.error ?? ''}`);
      return body.data;
    },
  };
}

/** A real Pushgateway on a free loopback port, persisting to a temporary file. */
export async function startPushgateway(): Promise<Daemon> {
  const dir = await mkdtemp(join(tmpdir(), 'kwave-pushgw-'));
  return startDaemon(
    'prometheus-pushgateway',
    (port, d) => [
      `--web.listen-address=127.0.0.1:${port}`,
      `--persistence.file=${join(d, 'pushgateway.data')}`,
      '--log.level=warn',
    ],
    dir,
  );
}
