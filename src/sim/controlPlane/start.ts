// Starts a real Kubernetes control plane on loopback: etcd, then kube-apiserver (ready when
// /readyz answers 200), then kube-controller-manager and kube-scheduler (ready when their /healthz
// answers and the service-account controller has made `default/default`, without which no pod can
// be created). Each is its own child process of the one binary (binary.ts); a temporary folder
// holds certificates, tokens, kubeconfigs, logs, the audit log and etcd's data.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../listen.js';
import { renderKubeconfig } from '../apiserver/kubeconfig.js';
import { findControlPlaneBinary } from './binary.js';
import { startComponent, type Component } from './component.js';
import {
  apiserverArgs,
  AUDIT_POLICY,
  controllerManagerArgs,
  etcdArgs,
  paths,
  schedulerArgs,
  type Layout,
} from './flags.js';
import { probe } from './http.js';
import {
  ADMIN_USER,
  AGENT_USER,
  CONTROLLER_MANAGER_USER,
  identities,
  renderTokenFile,
  SCHEDULER_USER,
  type ExtraUser,
} from './identities.js';

export interface ControlPlaneOptions {
  /** The binary; default: KWAVE_CONTROL_PLANE_BIN or the cached build of `kubernetes` (binary.ts). */
  binary?: string;
  /** The Kubernetes release to run, e.g. `1.33` (releases.ts); default KWAVE_KUBERNETES, else the newest. */
  kubernetes?: string;
  /** Extra bearer-token users (e.g. an unprivileged test user); tokens in `ControlPlane.tokens`. */
  users?: ExtraUser[];
  /** false: etcd and apiserver only (as envtest runs them). Default true. */
  controllers?: boolean;
  /** Appended to a component's flags (a later flag wins), e.g. `{ 'controller-manager': ['--node-monitor-grace-period=20s'] }`. */
  extraArgs?: Partial<Record<'apiserver' | 'controller-manager' | 'scheduler', string[]>>;
  serviceClusterIpRange?: string;
  /** Keep the temporary folder (logs, audit log) after close(). */
  keepDir?: boolean;
  /** Bound on each start-up step; the box may be loaded. Default 180 s. */
  stepTimeoutMs?: number;
  /**
   * Where the ports come from; default a free loopback port each. The components bind them only
   * later, so another process may take one first: such a start is retried with fresh ports.
   */
  pickPort?: () => Promise<number>;
  /** Starts tried when a port was taken meanwhile (default 5). */
  portAttempts?: number;
}

type ComponentName = 'etcd' | 'apiserver' | 'controller-manager' | 'scheduler';

interface KubeconfigOptions {
  /** Context (and cluster) name; default `kwave-sim`, as the embedded simulator writes. */
  context?: string;
  namespace?: string;
  /** Bearer token; default the admin's. */
  token?: string;
}

export interface ControlPlane {
  /** `https://127.0.0.1:PORT` */
  url: string;
  /** The binary the components run from (it also runs the real kubelets). */
  binary: string;
  caPem: string;
  /** The kube-apiserver's /version gitVersion, e.g. `v1.33.13`. */
  version: string;
  adminToken: string;
  /** The node agent's token (user `kwave-node-agent`, in system:masters; see identities.ts). */
  agentToken: string;
  /** Every static token by user name: admin, agent, components and the extra users. */
  tokens: Record<string, string>;
  adminUser: string;
  agentUser: string;
  auditLogPath: string;
  /** The temporary folder (pki/, *.log, audit.log, etcd/). */
  dir: string;
  /** Milliseconds from the call to the apiserver's /readyz and to running controllers. */
  timings: { apiserverReadyMs: number; controllersReadyMs: number | undefined };
  kubeconfig(opts?: KubeconfigOptions): string;
  logPath(component: ComponentName): string;
  /** The running components' process ids (to check that none outlives close() or a killed parent). */
  pids(): Partial<Record<ComponentName, number>>;
  /** Stops the apiserver and starts it again on the same port with the same state. */
  restartApiServer(): Promise<void>;
  /** etcd's client URL (plain HTTP on loopback; its v3 JSON gateway serves /v3/kv/compaction). */
  etcdUrl: string;
  /** Stops etcd and starts it again on the same ports with the same data (the apiserver reconnects by itself). */
  restartEtcd(): Promise<void>;
  /** Freezes etcd (SIGSTOP) for `ms`, then lets it run on; resolves when it runs again. */
  pauseEtcd(ms: number): Promise<void>;
  /** Stops every component (no orphans) and removes the folder unless `keepDir`. */
  close(): Promise<void>;
}

const run = promisify(execFile);

/**
 * A component that could not bind the port it was given (another process took it between our
 * pick and its bind: several control planes starting at once). The start is retried on fresh ports.
 */
class PortTakenError extends Error {}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const attempts = opts.portAttempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= attempts) throw err;
    }
  }
}

async function startOnce(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const t0 = Date.now();
  const binary = opts.binary ?? binaryOrThrow(opts.kubernetes);
  const pickPort = opts.pickPort ?? freePort;
  const stepMs = opts.stepTimeoutMs ?? 180_000;
  const dir = await mkdtemp(join(tmpdir(), 'kwave-cp-'));
  const p = paths(dir);
  const running: Component[] = [];
  const closeAll = async () => {
    for (const c of [...running].reverse()) await c.stop();
    running.length = 0;
  };
  try {
    await run(binary, ['certs', '--dir', p.certs]);
    const caPem = readFileSync(p.ca, 'utf8');
    const ids = identities(opts.users);
    const tokens = Object.fromEntries(ids.map((i) => [i.user, i.token]));
    const tokenOf = (user: string) => tokens[user] as string;
    const layout: Layout = {
      dir,
      etcdClientPort: await pickPort(),
      etcdPeerPort: await pickPort(),
      apiserverPort: await pickPort(),
      controllerManagerPort: await pickPort(),
      schedulerPort: await pickPort(),
      serviceClusterIpRange: opts.serviceClusterIpRange ?? '10.0.0.0/24',
    };
    const url = `https://127.0.0.1:${layout.apiserverPort}`;
    await writeFile(p.tokens, renderTokenFile(ids), { mode: 0o600 });
    await writeFile(p.auditPolicy, AUDIT_POLICY);
    await writeFile(
      p.controllerManagerKubeconfig,
      renderKubeconfig({
        server: url,
        caPem,
        token: tokenOf(CONTROLLER_MANAGER_USER),
        context: 'kube-controller-manager',
      }),
      { mode: 0o600 },
    );
    await writeFile(
      p.schedulerKubeconfig,
      renderKubeconfig({ server: url, caPem, token: tokenOf(SCHEDULER_USER), context: 'kube-scheduler' }),
      { mode: 0o600 },
    );

    const launch = (name: string, args: string[]) => {
      const c = startComponent(binary, name, args, p.log(name));
      running.push(c);
      return c;
    };
    let etcd = launch('etcd', etcdArgs(layout));
    // /health has no authentication: another control plane's etcd on a taken port would answer
    // it, so ours must first say in its own log that it serves there (once more than before: a
    // restarted etcd appends to the same log).
    const etcdUrl = `http://127.0.0.1:${layout.etcdClientPort}`;
    const etcdReadyLines = () => etcd.logTail(100_000).split(`etcd ready on ${etcdUrl}`).length - 1;
    const etcdReady = (readyBefore: number) =>
      untilReady(
        etcd,
        stepMs,
        async () => etcdReadyLines() > readyBefore && (await probe(`${etcdUrl}/health`)).status === 200,
      );
    await etcdReady(0);

    const apiserverFlags = [...apiserverArgs(layout), ...(opts.extraArgs?.apiserver ?? [])];
    const adminToken = tokenOf(ADMIN_USER);
    const apiserverReady = (c: Component) =>
      untilReady(c, stepMs, async () => (await probe(`${url}/readyz`, { caPem, token: adminToken })).status === 200);
    let apiserver = launch('apiserver', apiserverFlags);
    await apiserverReady(apiserver);
    const apiserverReadyMs = Date.now() - t0;
    const version = (
      JSON.parse((await probe(`${url}/version`, { caPem, token: adminToken })).body) as { gitVersion: string }
    ).gitVersion;

    let controllersReadyMs: number | undefined;
    if (opts.controllers !== false) {
      const cm = launch('controller-manager', [
        ...controllerManagerArgs(layout),
        ...(opts.extraArgs?.['controller-manager'] ?? []),
      ]);
      const scheduler = launch('scheduler', [...schedulerArgs(layout), ...(opts.extraArgs?.scheduler ?? [])]);
      // Their /healthz is unauthenticated too: the component's own log must name the port first.
      const healthy = (c: Component, port: number) => async () =>
        c.logTail(1000).includes(`Serving securely on 127.0.0.1:${port}`) &&
        (await probe(`https://127.0.0.1:${port}/healthz`, { insecure: true })).status === 200;
      await Promise.all([
        untilReady(cm, stepMs, healthy(cm, layout.controllerManagerPort)),
        untilReady(scheduler, stepMs, healthy(scheduler, layout.schedulerPort)),
      ]);
      await untilReady(
        cm,
        stepMs,
        async () =>
          (await probe(`${url}/api/v1/namespaces/default/serviceaccounts/default`, { caPem, token: adminToken }))
            .status === 200,
      );
      controllersReadyMs = Date.now() - t0;
    }

    let closed: Promise<void> | undefined;
    return {
      url,
      binary,
      caPem,
      version,
      adminToken,
      agentToken: tokenOf(AGENT_USER),
      tokens,
      adminUser: ADMIN_USER,
      agentUser: AGENT_USER,
      etcdUrl,
      auditLogPath: p.auditLog,
      dir,
      timings: { apiserverReadyMs, controllersReadyMs },
      kubeconfig: (k = {}) =>
        renderKubeconfig({
          server: url,
          caPem,
          token: k.token ?? adminToken,
          context: k.context ?? 'kwave-sim',
          ...(k.namespace ? { namespace: k.namespace } : {}),
        }),
      logPath: (component) => p.log(component),
      pids: () => Object.fromEntries(running.filter((c) => !c.exited).map((c) => [c.name, c.pid])),
      async restartApiServer() {
        await apiserver.stop();
        const index = running.indexOf(apiserver);
        apiserver = startComponent(binary, 'apiserver', apiserverFlags, p.log('apiserver'));
        running[index] = apiserver;
        await apiserverReady(apiserver);
      },
      async restartEtcd() {
        const readyBefore = etcdReadyLines();
        await etcd.stop();
        const index = running.indexOf(etcd);
        etcd = startComponent(binary, 'etcd', etcdArgs(layout), p.log('etcd'));
        running[index] = etcd;
        await etcdReady(readyBefore);
      },
      async pauseEtcd(ms) {
        etcd.signal('SIGSTOP');
        await new Promise((r) => setTimeout(r, ms));
        etcd.signal('SIGCONT');
      },
      close() {
        closed ??= (async () => {
          await closeAll();
          if (!opts.keepDir) await rm(dir, { recursive: true, force: true });
        })();
        return closed;
      },
    };
  } catch (err) {
    await closeAll();
    if (!opts.keepDir) await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

function binaryOrThrow(kubernetes: string | undefined): string {
  const found = findControlPlaneBinary(process.env, kubernetes);
  if ('reason' in found) throw new Error(found.reason);
  return found.path;
}

/** Polls `ready` every 200 ms until true; fails at once, with its log, if the component exits. */
async function untilReady(c: Component, timeoutMs: number, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (c.exited && /address already in use/i.test(c.logTail()))
      throw new PortTakenError(`control plane: ${c.name} found its port taken:\n${c.logTail(5)}`);
    if (c.exited)
      throw new Error(
        `control plane: ${c.name} exited (${c.exited.signal ?? `code ${c.exited.code}`}) while starting; its log ends:\n${c.logTail()}`,
      );
    try {
      if (await ready()) return;
      last = 'not ready yet';
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline)
      throw new Error(
        `control plane: ${c.name} not ready after ${timeoutMs} ms (${last}); its log ends:\n${c.logTail()}`,
      );
    await Promise.race([new Promise((r) => setTimeout(r, 200)), c.whenExited()]);
  }
}
