// What a benchmark started, stopped when it is interrupted. Node's default for SIGINT and SIGTERM
// is to exit at once, leaving its children running: a `kwave sim` with its control plane, a
// kruise-manager, a `kwave run` under GNU time. Each start registers its stop here; the first
// SIGINT/SIGTERM runs the stops, newest first (a tool before the cluster it talks to), each given
// STOP_WAIT_MS, then exits 128 + the signal's number; a second signal exits at once.
import { constants } from 'node:os';

const STOP_WAIT_MS = 30_000;
const stops = new Set<() => Promise<void>>();
let listening = false;
let interrupted = false;

async function interrupt(signal: 'SIGINT' | 'SIGTERM'): Promise<void> {
  const code = 128 + constants.signals[signal];
  if (interrupted) process.exit(code);
  interrupted = true;
  console.error(`\n${signal}: stopping what the benchmark started (${stops.size})`);
  for (const stop of [...stops].reverse()) {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)));
    await Promise.race([stop().catch((err: unknown) => console.error(`stopping: ${String(err)}`)), waited]);
    clearTimeout(timer);
  }
  process.exit(code);
}

/** Runs `stop` if the benchmark is interrupted before the returned function is called. */
export function stopOnInterrupt(stop: () => Promise<void>): () => void {
  if (!listening) {
    listening = true;
    process.on('SIGINT', () => void interrupt('SIGINT'));
    process.on('SIGTERM', () => void interrupt('SIGTERM'));
  }
  stops.add(stop);
  return () => stops.delete(stop);
}

/**
 * Stops a child spawned `detached` (its own process group, so that a terminal's Ctrl-C reaches
 * only the benchmark): SIGTERM to the whole group (GNU time and what it runs, a shell script and
 * its kubectls), then resolves when the child has exited.
 */
export function stopGroup(pid: number, exited: Promise<unknown>): Promise<void> {
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    // gone already
  }
  return exited.then(() => undefined);
}
