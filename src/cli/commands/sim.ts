// `kwave sim`: runs the simulated cluster until SIGINT/SIGTERM, then closes it and exits 0. Its embedded
// clusters are served from a thread of their own (simThread.ts says why).
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExitCode, KwaveError } from '../../errors.js';
import { parseFaults } from '../../sim/faults.js';
import { FAULTS_EMBEDDED_ONLY, startRealSim } from '../../sim/real/index.js';
import type { CommandContext } from '../context.js';
import { serveInWorker, type Served } from '../simThread.js';
import type { ServedCluster } from '../simWorker.js';

function wholeNumber(value: unknown, flag: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max)
    throw new KwaveError('USAGE', `${flag}: expected a whole number from 0 to ${max}, found "${String(value)}"`);
  return n;
}

function positive(value: unknown, flag: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new KwaveError('USAGE', `${flag}: expected a number > 0, found "${String(value)}"`);
  return n;
}

function share(value: unknown, flag: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n >= 1)
    throw new KwaveError('USAGE', `${flag}: expected a number from 0 to below 1, found "${String(value)}"`);
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

/** The signal that stops the simulator; throws instead if its thread fails first. */
async function untilSignal(
  signal: ReturnType<typeof nextSignal>,
  crashed: Promise<never> | undefined,
): Promise<NodeJS.Signals> {
  if (!crashed) return signal.received;
  try {
    return await Promise.race([signal.received, crashed]);
  } finally {
    signal.cancel();
  }
}

export async function run(ctx: CommandContext, _args: string[], opts: Record<string, unknown>): Promise<number> {
  const pods = wholeNumber(opts.pods ?? 10, '--pods', 1_000_000);
  const port = wholeNumber(opts.port ?? 0, '--port', 65535);
  const metricsPort = wholeNumber(opts.metricsPort ?? 0, '--metrics-port', 65535);
  const timeScale = positive(opts.timeScale ?? 1, '--time-scale');
  const jitter = opts.jitter === undefined ? undefined : share(opts.jitter, '--jitter');
  const faultSpec = opts.faults as string | undefined;
  const clusters = opts.clusters === undefined ? 1 : wholeNumber(opts.clusters, '--clusters', 100);
  if (clusters < 1) throw new KwaveError('USAGE', '--clusters: expected a whole number from 1 to 100, found "0"');
  const controlPlane = String(opts.controlPlane ?? 'embedded');
  if (controlPlane !== 'embedded' && controlPlane !== 'real')
    throw new KwaveError('USAGE', `--control-plane: expected embedded or real, found "${controlPlane}"`);
  const kubelet = String(opts.kubelet ?? 'simulated');
  if (kubelet !== 'simulated' && kubelet !== 'real')
    throw new KwaveError('USAGE', `--kubelet: expected simulated or real, found "${kubelet}"`);
  if (kubelet === 'real' && controlPlane !== 'real')
    throw new KwaveError(
      'USAGE',
      '--kubelet real: real kubelets join a real control plane; add --control-plane real (the embedded backend runs its own simulated kubelet)',
    );
  const kubernetes = opts.kubernetes as string | undefined;
  if (kubernetes !== undefined && controlPlane !== 'real')
    throw new KwaveError(
      'USAGE',
      '--kubernetes: picks the release of the real control plane; add --control-plane real (the embedded backend is one simulator)',
    );
  if (controlPlane === 'real' && faultSpec !== undefined)
    throw new KwaveError('USAGE', `--faults: ${FAULTS_EMBEDDED_ONLY}`);
  if (controlPlane === 'real' && opts.clusters !== undefined)
    throw new KwaveError(
      'USAGE',
      '--clusters: the real control plane serves one cluster per process; use --control-plane embedded for several',
    );
  if (controlPlane === 'real' && port !== 0)
    throw new KwaveError(
      'USAGE',
      '--port: the real kube-apiserver takes a free port of its own; leave --port at 0 with --control-plane real',
    );
  if (faultSpec !== undefined) {
    try {
      parseFaults(faultSpec);
    } catch (err) {
      throw new KwaveError('USAGE', `--faults: ${(err as Error).message}`);
    }
  }
  // Without --kubeconfig-out, write one to a private temporary file and remove it on exit.
  const ownKubeconfig = opts.kubeconfigOut === undefined;
  const kubeconfigOut =
    (opts.kubeconfigOut as string | undefined) ?? join(tmpdir(), `kwave-sim-${process.pid}.kubeconfig`);

  // Listen from the start: a signal during a long start (50,000 pods) stops it once it is up.
  const signal = nextSignal();
  if (opts.clusters !== undefined)
    return serveClusters(
      ctx,
      {
        clusters,
        pods,
        fixture: opts.fixture as string | undefined,
        port,
        metricsPort,
        kubeconfigOut,
        ownKubeconfig,
        faultSpec,
        timeScale,
        jitter,
      },
      signal,
    );
  // The real control plane's node agent stays on this thread: its own cost is small beside
  // kube-apiserver's and etcd's.
  let served: ServedCluster & {
    realControlPlane?: string;
    auditLog?: string;
    crashed?: Promise<never>;
    close(): Promise<void>;
  };
  try {
    const fixture = opts.fixture as string | undefined;
    if (controlPlane === 'real') {
      const sim = await startRealSim({
        pods,
        fixture,
        metricsPort,
        kubeconfigOut,
        timeScale,
        jitter,
        kubelet,
        controlPlane: { kubernetes },
        onWarning: (m) => ctx.io.stderr.write(`${kubelet === 'real' ? 'kubelets' : 'node agent'}: ${m}\n`),
      });
      const realControlPlane = `real control plane ${sim.controlPlane.version} up in ${(sim.timings.controlPlaneMs / 1000).toFixed(1)} s; pods Running and Ready ${(sim.timings.worldMs / 1000).toFixed(1)} s later`;
      served = {
        url: sim.url,
        metricsUrl: sim.metricsUrl,
        world: sim.world,
        realControlPlane,
        auditLog: sim.controlPlane.auditLogPath,
        close: () => sim.close(),
      };
    } else {
      const sim = await serveInWorker({
        kind: 'one',
        options: { pods, fixture, port, metricsPort, kubeconfigOut, faults: faultSpec, timeScale, jitter },
      });
      served = { ...sim.clusters[0]!, crashed: sim.crashed, close: () => sim.close() };
    }
  } catch (err) {
    signal.cancel();
    throw err;
  }
  const { stdout } = ctx.io;
  if (ctx.common.output === 'json') {
    stdout.write(
      JSON.stringify({
        event: 'started',
        url: served.url,
        metricsUrl: served.metricsUrl,
        kubeconfig: kubeconfigOut,
        ...(served.auditLog ? { auditLog: served.auditLog } : {}),
        ...served.world,
      }) + '\n',
    );
  } else {
    stdout.write(`listening on ${served.url}\n`);
    stdout.write(`metrics on ${served.metricsUrl}\n`);
    stdout.write(`kubeconfig written to ${kubeconfigOut}\n`);
    stdout.write(
      `${served.world.pods} pods on ${served.world.nodes} nodes; try: kubectl --kubeconfig ${kubeconfigOut} get pods -o wide\n`,
    );
    if (served.realControlPlane) stdout.write(`${served.realControlPlane}\n`);
  }
  const received = await untilSignal(signal, served.crashed);
  await served.close();
  if (ownKubeconfig) await rm(kubeconfigOut, { force: true });
  if (ctx.common.output === 'json') stdout.write(JSON.stringify({ event: 'stopped', signal: received }) + '\n');
  else stdout.write(`${received}: stopped\n`);
  return ExitCode.OK;
}

interface ClustersRun {
  clusters: number;
  pods: number;
  fixture: string | undefined;
  port: number;
  metricsPort: number;
  kubeconfigOut: string;
  ownKubeconfig: boolean;
  faultSpec: string | undefined;
  timeScale: number;
  jitter: number | undefined;
}

/** `kwave sim --clusters N`: N embedded clusters, one kubeconfig with contexts sim-1 … sim-N. */
async function serveClusters(
  ctx: CommandContext,
  r: ClustersRun,
  signal: ReturnType<typeof nextSignal>,
): Promise<number> {
  let sims: Served;
  try {
    sims = await serveInWorker({
      kind: 'clusters',
      options: {
        clusters: r.clusters,
        pods: r.pods,
        fixture: r.fixture,
        port: r.port,
        metricsPort: r.metricsPort,
        kubeconfigOut: r.kubeconfigOut,
        faults: r.faultSpec,
        timeScale: r.timeScale,
        jitter: r.jitter,
      },
    });
  } catch (err) {
    signal.cancel();
    throw err;
  }
  const { stdout } = ctx.io;
  if (ctx.common.output === 'json') {
    const clusters = sims.clusters.map((c) => ({
      name: c.name,
      context: c.name,
      url: c.url,
      metricsUrl: c.metricsUrl,
      ...c.world,
    }));
    stdout.write(JSON.stringify({ event: 'started', kubeconfig: r.kubeconfigOut, clusters }) + '\n');
  } else {
    for (const c of sims.clusters) {
      stdout.write(`${c.name}: listening on ${c.url}\n`);
      stdout.write(`${c.name}: metrics on ${c.metricsUrl}\n`);
      stdout.write(`${c.name}: ${c.world.pods} pods on ${c.world.nodes} nodes\n`);
    }
    stdout.write(
      `kubeconfig written to ${r.kubeconfigOut} (contexts ${sims.clusters.map((c) => c.name).join(', ')})\n`,
    );
    stdout.write(`try: kubectl --kubeconfig ${r.kubeconfigOut} --context ${sims.clusters[0]!.name} get pods -o wide\n`);
  }
  const received = await untilSignal(signal, sims.crashed);
  await sims.close();
  if (r.ownKubeconfig) await rm(r.kubeconfigOut, { force: true });
  if (ctx.common.output === 'json') stdout.write(JSON.stringify({ event: 'stopped', signal: received }) + '\n');
  else stdout.write(`${received}: stopped\n`);
  return ExitCode.OK;
}
