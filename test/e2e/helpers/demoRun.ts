// `kwave demo --keep` as a user runs it (the built CLI): the demo leaves its simulated cluster up
// and prints the kubeconfig to inspect it, so a test reads the pods back from the API server
// itself instead of trusting the demo's own proof line, then ends the demo with Ctrl-C (SIGINT).
import { spawn } from 'node:child_process';
import type { V1Pod } from '@kubernetes/client-node';
import { CHILD_LIMITS, ROOT } from './kwaveBin.js';
import { clusterReader } from './clusterRead.js';

export interface DemoRun {
  /** Standard output and error so far, interleaved as they came. */
  output(): string;
  /** The demo's pods (namespace default), read from its API server while the demo keeps it up. */
  pods: V1Pod[];
  /** The demo's exit code after the SIGINT that ended it. */
  code: number | null;
}

/** Runs `kwave demo ARGS --keep`, reads the pods once it says the cluster keeps running, then stops it. */
export async function runDemoKept(args: string[]): Promise<DemoRun> {
  const child = spawn(process.execPath, ['bin/kwave.js', 'demo', ...args, '--keep'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...CHILD_LIMITS,
  });
  let out = '';
  let onOutput = () => {};
  const take = (b: Buffer) => {
    out += b.toString();
    onOutput();
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  let ended = false;
  void closed.then(() => {
    ended = true;
    onOutput();
  });
  // An event, not a sleep: the line comes once the rollout and its proof are done.
  const kubeconfig = await new Promise<string | undefined>((resolve) => {
    onOutput = () => {
      const m = /kubectl --kubeconfig (\S+) get pods/.exec(out);
      if (m) resolve(m[1]);
      else if (ended) resolve(undefined);
    };
    onOutput();
  });
  if (!kubeconfig) return { output: () => out, pods: [], code: await closed };
  let pods: V1Pod[];
  try {
    pods = await clusterReader(kubeconfig).pods('default');
  } finally {
    child.kill('SIGINT');
  }
  return { output: () => out, pods, code: await closed };
}
