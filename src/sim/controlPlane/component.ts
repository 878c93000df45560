// One control-plane component as a child process: its output appended to a log file, its exit
// observed, stop = SIGTERM then SIGKILL. The child ends with this process however this process
// ends: it asks the kernel for SIGKILL on parent death (Pdeathsig) and, with
// KWAVE_CP_WATCH_STDIN=1, also exits when its stdin pipe (held by this process) closes.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

/** The names the upstream binaries run under. */
const PROGRAM_NAMES: Record<string, string> = {
  etcd: 'etcd',
  apiserver: 'kube-apiserver',
  'controller-manager': 'kube-controller-manager',
  scheduler: 'kube-scheduler',
  // The kubelet (hollow, kwave's own subcommand) shows as what it is: `kwave-control-plane kubelet --name=…`.
  kubelet: 'kwave-control-plane',
};

export interface Component {
  readonly name: string;
  readonly pid: number;
  /** Set once the process has exited. */
  readonly exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Resolves when the process exits (at once if it has). */
  whenExited(): Promise<void>;
  /** The last lines of its log, for error messages. */
  logTail(lines?: number): string;
  stop(graceMs?: number): Promise<void>;
  signal(sig: NodeJS.Signals): void;
}

export function startComponent(binary: string, name: string, args: string[], logPath: string): Component {
  const fd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, [name, ...args], {
      argv0: PROGRAM_NAMES[name] ?? name, // what ps and the components' User-Agent show
      stdio: ['pipe', fd, fd],
      env: { ...process.env, KWAVE_CP_WATCH_STDIN: '1' },
    });
  } finally {
    closeSync(fd); // the child holds its own copy
  }
  let exited: Component['exited'];
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
    child.once('error', (err) => {
      exited = { code: null, signal: null };
      logError = err;
      resolve();
    });
  });
  let logError: Error | undefined;
  child.stdin?.on('error', () => undefined); // a dead child's closed pipe is not our error
  return {
    name,
    get pid() {
      return child.pid ?? -1;
    },
    get exited() {
      return exited;
    },
    whenExited: () => exit,
    logTail(lines = 30) {
      let text = '';
      try {
        text = readFileSync(logPath, 'utf8');
      } catch {
        // no log yet
      }
      const tail = text.trimEnd().split('\n').slice(-lines).join('\n');
      return logError ? `${logError.message}\n${tail}` : tail;
    },
    async stop(graceMs = 10_000) {
      if (exited) return;
      child.kill('SIGCONT'); // a paused etcd cannot act on SIGTERM
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exit;
      clearTimeout(killer);
    },
    signal(sig) {
      if (!exited) child.kill(sig);
    },
  };
}
