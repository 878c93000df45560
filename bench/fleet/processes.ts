// Child processes as the benchmark runs them, and what the OS says they cost. A kwave command runs
// under GNU time (`/usr/bin/time -v -o FILE`): peak RSS and CPU seconds of that one process, not
// of the benchmark's. The simulator, which runs on across phases, is read from /proc (utime +
// stime, VmHWM) between phases.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { stopGroup, stopOnInterrupt } from './interrupt.js';

export const GNU_TIME = '/usr/bin/time';

/** What GNU time reports about one process, in seconds and bytes. */
export interface Usage {
  wallSeconds: number;
  cpuSeconds: number;
  userSeconds: number;
  systemSeconds: number;
  peakRssBytes: number;
}

export interface Finished {
  code: number | null;
  usage: Usage;
  stderr: string;
  /** Seconds from spawn to the first line `firstLine` matched, if any did. */
  firstMatchSeconds?: number;
}

/** Parses `/usr/bin/time -v` output. Pure. */
export function parseGnuTime(text: string): Usage {
  const field = (label: string): string => {
    const line = text.split('\n').find((l) => l.trim().startsWith(label));
    if (!line) throw new Error(`GNU time output has no "${label}" line:\n${text}`);
    return line.slice(line.lastIndexOf(': ') + 2).trim();
  };
  const userSeconds = Number(field('User time (seconds)'));
  const systemSeconds = Number(field('System time (seconds)'));
  const wall = field('Elapsed (wall clock) time').split(':').map(Number);
  const wallSeconds = wall.reduce((acc, part) => acc * 60 + part, 0);
  return {
    wallSeconds,
    userSeconds,
    systemSeconds,
    cpuSeconds: userSeconds + systemSeconds,
    peakRssBytes: Number(field('Maximum resident set size (kbytes)')) * 1024,
  };
}

export function requireGnuTime(): void {
  if (!existsSync(GNU_TIME))
    throw new Error(
      `${GNU_TIME} is missing: install GNU time (apt-get install time); the benchmark reads peak RSS and CPU from it`,
    );
}

/**
 * Runs `node ARGS` (or `executable ARGS`) under GNU time, its stdout into `stdoutFile` (a file, not a pipe: a benchmark
 * busy reading a pipe would slow the writer down and charge it for the wait); afterwards every
 * stdout line goes to `onLine`. `firstLine` picks the first line of interest (e.g. the first pod
 * patched), and its `"time"` field, against the spawn time, gives `firstMatchSeconds`.
 */
export function runTimed(
  nodeArgs: string[],
  opts: {
    usageFile: string;
    stdoutFile: string;
    env?: NodeJS.ProcessEnv;
    /** What runs; default this Node. */
    executable?: string;
    onLine?: (line: string) => void;
    firstLine?: (line: string) => boolean;
  },
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const spawnedAt = Date.now();
    const out = openSync(opts.stdoutFile, 'w');
    const child = spawn(GNU_TIME, ['-v', '-o', opts.usageFile, opts.executable ?? process.execPath, ...nodeArgs], {
      stdio: ['ignore', out, 'pipe'],
      env: opts.env ?? process.env,
      detached: true,
    });
    closeSync(out);
    const exited = new Promise<void>((r) => child.on('close', () => r()));
    const forget = stopOnInterrupt(() => stopGroup(child.pid!, exited));
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
    child.on('error', reject);
    child.on('close', (code) => {
      forget();
      try {
        let firstMatchSeconds: number | undefined;
        for (const line of readFileSync(opts.stdoutFile, 'utf8').split('\n')) {
          if (!line) continue;
          if (firstMatchSeconds === undefined && opts.firstLine?.(line)) {
            const at = Date.parse((JSON.parse(line) as { time?: string }).time ?? '');
            if (!Number.isNaN(at)) firstMatchSeconds = (at - spawnedAt) / 1000;
          }
          opts.onLine?.(line);
        }
        resolve({ code, usage: parseGnuTime(readFileSync(opts.usageFile, 'utf8')), stderr, firstMatchSeconds });
      } catch (err) {
        reject(err instanceof Error ? new Error(`${err.message}\nstderr: ${stderr}`) : err);
      }
    });
  });
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds (user + system) a live process has used so far, from /proc/PID/stat. */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at state, field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Current and peak resident set size of a live process, from /proc/PID/status. */
export function memoryOf(pid: number): { rssBytes: number; peakRssBytes: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) =>
    Number(/^\S+:\s+(\d+)/.exec(status.split('\n').find((l) => l.startsWith(key)) ?? '')?.[1] ?? NaN) * 1024;
  return { rssBytes: kb('VmRSS:'), peakRssBytes: kb('VmHWM:') };
}

export interface SimProcess {
  child: ChildProcess;
  url: string;
  metricsUrl: string;
  kubeconfig: string;
  /** The real control plane's audit log (`--control-plane real` only). */
  auditLog?: string;
  /** Spawn to "started". */
  startSeconds: number;
  stop(): Promise<void>;
}

/** Starts `kwave sim` as its own process and waits for its "started" line (or its exit). */
export function startSimProcess(
  args: string[],
  kubeconfig: string,
  timeoutMs: number,
  nodeFlags: string[] = [],
): Promise<SimProcess> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [...nodeFlags, 'bin/kwave.js', 'sim', '-o', 'json', '--kubeconfig-out', kubeconfig, ...args],
      // Its own process group: on Ctrl-C the benchmark stops it (stopOnInterrupt), once.
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-20_000);
      process.stderr.write(`[sim] ${d}`);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the simulator did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    const exited = new Promise<void>((r) => child.on('close', () => r()));
    const forget = stopOnInterrupt(() => stop());
    const stop = async () => {
      child.kill('SIGTERM');
      await exited;
    };
    child.on('close', (code) => {
      forget();
      clearTimeout(timer);
      reject(new Error(`the simulator exited (${code}) before it served: ${stderr.trim()}`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      let msg: { event?: string; url?: string; metricsUrl?: string; auditLog?: string };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        return;
      }
      if (msg.event !== 'started' || !msg.url || !msg.metricsUrl) return;
      clearTimeout(timer);
      resolve({
        child,
        url: msg.url,
        metricsUrl: msg.metricsUrl,
        kubeconfig,
        ...(msg.auditLog ? { auditLog: msg.auditLog } : {}),
        startSeconds: (performance.now() - t0) / 1000,
        stop,
      });
    });
  });
}
