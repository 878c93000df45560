// `kwave sim`: runs the simulated cluster until SIGINT/SIGTERM, then closes it and exits 0.
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExitCode, KwaveError } from '../../errors.js';
import { parseFaults } from '../../sim/faults.js';
import { startSim } from '../../sim/index.js';
import type { CommandContext } from '../context.js';

function wholeNumber(value: unknown, flag: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new KwaveError('USAGE', `${flag}: expected a whole number from 0 to ${max}, found "${String(value)}"`);
  return n;
}

function positive(value: unknown, flag: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new KwaveError('USAGE', `${flag}: expected a number > 0, found "${String(value)}"`);
  return n;
}

function share(value: unknown, flag: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n >= 1) throw new KwaveError('USAGE', `${flag}: expected a number from 0 to below 1, found "${String(value)}"`);
  return n;
}

/** The first of SIGINT/SIGTERM (listening stops then, or on `cancel`). */
function nextSignal(): { received: Promise<NodeJS.Signals>; cancel(): void } {
  let cancel = () => {};
  const received = new Promise<NodeJS.Signals>((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      cancel();
      resolve(signal);
    };
    cancel = () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
  return { received, cancel };
}

export async function run(ctx: CommandContext, _args: string[], opts: Record<string, unknown>): Promise<number> {
  const pods = wholeNumber(opts.pods ?? 10, '--pods', 1_000_000);
  const port = wholeNumber(opts.port ?? 0, '--port', 65535);
  const metricsPort = wholeNumber(opts.metricsPort ?? 0, '--metrics-port', 65535);
  const timeScale = positive(opts.timeScale ?? 1, '--time-scale');
  const jitter = opts.jitter === undefined ? undefined : share(opts.jitter, '--jitter');
  const faultSpec = opts.faults as string | undefined;
  if (faultSpec !== undefined) {
    try {
      parseFaults(faultSpec);
    } catch (err) {
      throw new KwaveError('USAGE', `--faults: ${(err as Error).message}`);
    }
  }
  // Without --kubeconfig-out, write one to a private temporary file and remove it on exit.
  const ownKubeconfig = opts.kubeconfigOut === undefined;
  const kubeconfigOut = (opts.kubeconfigOut as string | undefined) ?? join(tmpdir(), `kwave-sim-${process.pid}.kubeconfig`);

  // Listen from the start: a signal during a long start (50,000 pods) stops it once it is up.
  const signal = nextSignal();
  let sim: Awaited<ReturnType<typeof startSim>>;
  try {
    sim = await startSim({ pods, fixture: opts.fixture as string | undefined, port, metricsPort, kubeconfigOut, faults: faultSpec, timeScale, jitter });
  } catch (err) {
    signal.cancel();
    throw err;
  }
  const { stdout } = ctx.io;
  if (ctx.common.output === 'json') {
    stdout.write(JSON.stringify({ event: 'started', url: sim.url, metricsUrl: sim.metricsUrl, kubeconfig: kubeconfigOut, ...sim.world }) + '\n');
  } else {
    stdout.write(`listening on ${sim.url}\n`);
    stdout.write(`metrics on ${sim.metricsUrl}\n`);
    stdout.write(`kubeconfig written to ${kubeconfigOut}\n`);
    stdout.write(`${sim.world.pods} pods on ${sim.world.nodes} nodes; try: kubectl --kubeconfig ${kubeconfigOut} get pods -o wide\n`);
  }
  const received = await signal.received;
  await sim.close();
  if (ownKubeconfig) await rm(kubeconfigOut, { force: true });
  if (ctx.common.output === 'json') stdout.write(JSON.stringify({ event: 'stopped', signal: received }) + '\n');
  else stdout.write(`${received}: stopped\n`);
  return ExitCode.OK;
}
