// `kwave dashboard [--address 127.0.0.1:8080] [--namespace N …]`: serves a web page of every
// rollout in the namespaces (default: the context's), live, with approve / pause / resume / abort
// (docs/dashboard.md). It reads and writes with the user's own kubeconfig, so RBAC is the user's.
// On a loopback address only this machine reaches it; any other address is said to be a risk and
// requires the access token printed with the URL. Runs until SIGINT/SIGTERM; exit 0, or 2 for a
// bad flag or a namespace the user may not read.
import { randomBytes } from 'node:crypto';
import { KubeError, kubeErrorToKwave } from '../../cluster/kubeError.js';
import { carryOut } from '../../dashboard/actions.js';
import { isLoopback } from '../../dashboard/access.js';
import { DashboardFeed } from '../../dashboard/feed.js';
import { startDashboardServer } from '../../dashboard/server.js';
import { ExitCode, KwaveError } from '../../errors.js';
import { formatHostPort, parseMetricsAddress } from '../../metrics/address.js';
import { connectFor } from '../../session/connection.js';
import type { CommandContext } from '../context.js';

const secret = () => randomBytes(24).toString('base64url');

export async function run(ctx: CommandContext, _args: string[], opts: Record<string, unknown>): Promise<number> {
  const { io } = ctx;
  const address = parseMetricsAddress(String(opts.address ?? '127.0.0.1:8080'), '--address');
  if (!address) throw new KwaveError('USAGE', '--address: expected HOST:PORT', ExitCode.BAD_INPUT);
  const host = address.host ?? '0.0.0.0';
  const loopback = address.host !== undefined && isLoopback(address.host);
  const cluster = connectFor(ctx.common, io.env);
  const asked = (opts.namespace as string[] | undefined) ?? [];
  const namespaces = asked.length > 0 ? [...new Set(asked)] : [cluster.defaultNamespace];
  const feed = new DashboardFeed(cluster, {
    namespaces,
    onError: (err, what) => io.stderr.write(`kwave dashboard: following ${what}: ${err.message} (retrying)\n`),
  });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    try {
      await feed.synced;
    } catch (err) {
      if (err instanceof KubeError) throw kubeErrorToKwave(err, `reading the rollouts of ${namespaces.join(', ')}`);
      throw err;
    }
    const token = loopback ? undefined : secret();
    const server = await startDashboardServer({
      host,
      port: address.port,
      ...(token ? { token } : {}),
      csrf: secret(),
      feed,
      act: (request, rollout) => carryOut(cluster, io.env, request, rollout),
    });
    const shownHost = address.host === undefined ? '0.0.0.0' : address.host;
    const url = `http://${formatHostPort(shownHost, server.port)}/${token ? `?token=${token}` : ''}`;
    if (token)
      io.stderr.write(
        `kwave dashboard: WARNING: listening on ${formatHostPort(shownHost, server.port)}, beyond this machine: ` +
          `whoever reaches it and has the token below acts on the cluster as you (approve, pause, resume, abort), ` +
          `over plain HTTP. Share the URL only with people who may; prefer 127.0.0.1 and an SSH tunnel.\n`,
      );
    io.stdout.write(
      `kwave dashboard: ${namespaces.length > 1 ? 'namespaces' : 'namespace'} ${namespaces.join(', ')} on ${url}\n`,
    );
    if (!stop.signal.aborted)
      await new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }));
    await server.close();
    return ExitCode.OK;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    feed.close();
    cluster.close();
  }
}
