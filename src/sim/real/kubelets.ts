// `--kubelet real`: one real kubelet process per fixture node (`kwave-control-plane kubelet`,
// kubemark's hollow kubelet over kwave's catalog-driven CRI layer), in place of the node agent.
// Each joins through TLS bootstrap as system:node:NAME. The pods bound to the nodes are followed
// by a watch, so the rest of the real backend (seeding, readiness stats, node faults) reads them
// as it reads the agent's. A node fault is real here: NotReady freezes the kubelet (SIGSTOP, no
// heartbeat, no status), Ready lets it run on; restart-kubelet stops it and starts it again.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderKubeconfig } from '../apiserver/kubeconfig.js';
import type { NodeAgent } from '../agent/index.js';
import { KubeHttp } from '../agent/kubeHttp.js';
import { PodWatch } from '../agent/podWatch.js';
import type { Timing } from '../clock.js';
import { startComponent, type Component } from '../controlPlane/component.js';
import type { FixtureNode } from '../fixture.js';
import type { ImageTable } from '../images.js';
import { freePort } from '../listen.js';
import { kubeletArgs, kubeletCatalog } from './kubeletConfig.js';

export interface RealKubeletsOptions {
  binary: string;
  url: string;
  caPem: string;
  /** Watches the nodes' pods (the agent's user, apart from kwave's in the audit log). */
  watchToken: string;
  /** The bootstrap credential: a user allowed to create node CSRs, which the controller-manager approves. */
  bootstrapToken: string;
  nodes: readonly FixtureNode[];
  podsPerNode?: ReadonlyMap<string, number>;
  images: ImageTable;
  timing?: Partial<Timing>;
  timeScale?: number;
  missingImages?: Readonly<Record<string, readonly string[]>>;
  /** The node Lease's duration; kubelets renew it every quarter of it. */
  leaseDurationSeconds: number;
  statusUpdateMs: number;
  onWarning?: (message: string) => void;
  /** Bound on a kubelet joining (TLS bootstrap, registration, Ready). Default 120 s. */
  joinTimeoutMs?: number;
}

export interface RealKubelets extends NodeAgent {
  /** Stops the node's kubelet and starts it again; resolves once the new one has renewed its Lease. */
  restartKubelet(name: string): Promise<void>;
  /** The kubelets' process ids by node. */
  pids(): Record<string, number>;
  logPath(name: string): string;
}

interface NodeObject {
  status?: { conditions?: { type?: string; status?: string }[] };
}

interface LeaseObject {
  spec?: { renewTime?: string };
}

export async function startRealKubelets(options: RealKubeletsOptions): Promise<RealKubelets> {
  const dir = await mkdtemp(join(tmpdir(), 'kwave-kubelets-'));
  const http = new KubeHttp({
    url: options.url,
    caPem: options.caPem,
    token: options.watchToken,
    userAgent: 'kwave-sim/kubelets',
  });
  const kubelets = new Map<string, { args: string[]; component: Component; stopped: boolean }>();
  const logPath = (name: string) => join(dir, `${name}.log`);
  let watch: PodWatch | undefined;
  const close = async () => {
    watch?.close();
    await Promise.all([...kubelets.values()].map((k) => k.component.stop()));
    http.close();
    await rm(dir, { recursive: true, force: true });
  };
  const joinTimeoutMs = options.joinTimeoutMs ?? 120_000;
  try {
    const catalogPath = join(dir, 'images.json');
    const missing = options.missingImages ?? {};
    await writeFile(
      catalogPath,
      JSON.stringify(kubeletCatalog(options.images, options.timing ?? {}, options.timeScale ?? 1, missing)),
    );
    const bootstrapKubeconfig = join(dir, 'bootstrap.kubeconfig');
    await writeFile(
      bootstrapKubeconfig,
      renderKubeconfig({
        server: options.url,
        caPem: options.caPem,
        token: options.bootstrapToken,
        context: 'kubelet-bootstrap',
      }),
      { mode: 0o600 },
    );
    for (const [index, node] of options.nodes.entries()) {
      const args = kubeletArgs({
        node,
        index,
        rootDir: join(dir, node.name),
        catalogPath,
        bootstrapKubeconfig,
        port: await freePort(),
        maxPods: Math.max(110, options.podsPerNode?.get(node.name) ?? 0),
        leaseDurationSeconds: options.leaseDurationSeconds,
        statusUpdateMs: options.statusUpdateMs,
      });
      kubelets.set(node.name, {
        args,
        component: startComponent(options.binary, 'kubelet', args, logPath(node.name)),
        stopped: false,
      });
    }
    await Promise.all(
      [...kubelets.entries()].map(([name, k]) => untilNodeReady(http, name, k.component, joinTimeoutMs)),
    );
    watch = new PodWatch(http, { onWarning: options.onWarning });
    await watch.synced;
  } catch (err) {
    await close();
    throw err;
  }
  const w = watch;
  const kubeletOf = (name: string) => {
    const k = kubelets.get(name);
    if (!k) throw new Error(`node ${name} has no kubelet here`);
    return k;
  };
  let closing: Promise<void> | undefined;
  return {
    pods: () => w.values(),
    pod: (namespace, name) => w.get(namespace, name),
    subscribe: (listener) => w.subscribe(listener),
    nodeNames: () => [...kubelets.keys()],
    async setNodeReady(name, ready) {
      const k = kubeletOf(name);
      k.stopped = !ready;
      k.component.signal(ready ? 'SIGCONT' : 'SIGSTOP');
    },
    isNodeReady: (name) => kubelets.has(name) && !kubelets.get(name)!.stopped,
    get podCount() {
      return w.size;
    },
    async restartKubelet(name) {
      const k = kubeletOf(name);
      await k.component.stop();
      const restartedAt = Date.now();
      k.component = startComponent(options.binary, 'kubelet', k.args, logPath(name));
      k.stopped = false;
      await untilLeaseRenewedAfter(http, name, restartedAt, k.component, joinTimeoutMs);
    },
    pids: () => Object.fromEntries([...kubelets].map(([name, k]) => [name, k.component.pid])),
    logPath,
    close: () => (closing ??= close()),
  };
}

/** Polls `ok` every 200 ms; fails with the kubelet's log if it exits, or after `timeoutMs`. */
async function untilKubelet(
  what: string,
  kubelet: Component,
  timeoutMs: number,
  ok: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (kubelet.exited)
      throw new Error(
        `kubelet: ${what}: it exited (${kubelet.exited.signal ?? `code ${kubelet.exited.code}`}); its log ends:\n${kubelet.logTail()}`,
      );
    if (await ok().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`kubelet: ${what} within ${timeoutMs / 1000} s; its log ends:\n${kubelet.logTail()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function untilNodeReady(http: KubeHttp, name: string, kubelet: Component, timeoutMs: number): Promise<void> {
  return untilKubelet(`node ${name} not Ready`, kubelet, timeoutMs, async () => {
    const node = await http.request<NodeObject>('GET', `/api/v1/nodes/${name}`);
    return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  });
}

function untilLeaseRenewedAfter(
  http: KubeHttp,
  name: string,
  after: number,
  kubelet: Component,
  timeoutMs: number,
): Promise<void> {
  return untilKubelet(`node ${name}'s Lease not renewed`, kubelet, timeoutMs, async () => {
    const lease = await http.request<LeaseObject>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`,
    );
    const renewed = Date.parse(lease.spec?.renewTime ?? '');
    return renewed > after;
  });
}
