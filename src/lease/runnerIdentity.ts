// Who a runner is, as its lease and messages name it (`user@host pid 1234 pidns 4026531836 #3fa9c1`),
// and whether a holder so named is known to be gone (killed on this very host). Reads the process
// table and /proc; nothing else.
import { randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';

/**
 * `user@host pid 1234 pidns 4026531836 #3fa9c1`: names the runner in messages, status and the
 * lease. The PID namespace and a per-process token keep two runners apart that share a hostname
 * and a pid (containers on the host network are all pid 1).
 */
export function runnerIdentity(pid = process.pid): string {
  const ns = pidNamespace();
  return `${currentUser()}@${hostname()} pid ${pid}${ns ? ` pidns ${ns}` : ''} #${PROCESS_TOKEN}`;
}

const PROCESS_TOKEN = randomBytes(3).toString('hex');

/** This process's PID namespace (Linux), so a pid is only judged where it means something. */
function pidNamespace(): string | undefined {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
  } catch {
    return undefined;
  }
}

/** The person at the keyboard: $USER, else the OS account. */
export function currentUser(env: NodeJS.ProcessEnv = process.env): string {
  if (env.USER) return env.USER;
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** True while a process with this pid exists on this machine. */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when `identity` names a process of this host and PID namespace that no longer exists: a
 * runner killed with SIGKILL. Its lease need not run out before the next run takes over.
 * Identities from other hosts or PID namespaces, or in another format, are never judged gone.
 */
export function holderGone(
  identity: string,
  host: string,
  alive: (pid: number) => boolean = pidAlive,
  ns: string | undefined = pidNamespace(),
): boolean {
  const m = /^[^@\s]+@(\S+) pid (\d+)(?: pidns (\d+))?(?: #\w+)?$/.exec(identity);
  if (!m || m[1] !== host || m[3] !== ns) return false;
  const pid = Number(m[2]);
  return pid !== process.pid && !alive(pid);
}
