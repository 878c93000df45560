// `kwave sim --control-plane real`: a real etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler (src/sim/controlPlane, built by `npm run build:control-plane`), kwave's node
// agent as the kubelet of the fixture's nodes (or, with `--kubelet real`, a real kubelet process
// per node: kubelets.ts), and the fixture's world seeded through the API.
// The admin and metrics port, the kubeconfig and the summary are those of the embedded backend;
// API fault injection is the embedded backend's only (there is no proxy in front of the apiserver).
import { restartPolicyOf } from '../kubelet/pods.js';
import { writeKubeconfig } from '../apiserver/kubeconfig.js';
import { HttpError, startAdminServer, type SimControl } from '../adminServer.js';
import { startNodeAgent, type NodeAgent } from '../agent/index.js';
import { KubeHttp, KubeHttpError } from '../agent/kubeHttp.js';
import { AppTraffic } from '../appMetrics.js';
import {
  findControlPlaneBinary,
  startControlPlane,
  type ControlPlane,
  type ControlPlaneOptions,
} from '../controlPlane/index.js';
import { ExitCode, KwaveError } from '../../errors.js';
import { defaultFixture, loadFixture, timingOf, type Fixture } from '../fixture.js';
import { ImageTable } from '../images.js';
import { followPodReadiness } from '../readiness.js';
import type { KubeObject } from '../store.js';
import { nodePodCapacity, type WorldSummary } from '../world.js';
import { startRealKubelets, type RealKubelets } from './kubelets.js';
import { untilNodeBack, untilNodePodsNotReady } from './nodeFaults.js';
import { seedRealWorld } from './seed.js';
import { RealStats } from './stats.js';

/** The real API server's admission is its own: the simulator's refuse/hold rules need the embedded one. */
const ADMISSION_EMBEDDED_ONLY =
  'admission rules (refuse or hold a write) are embedded-only: run `kwave sim --control-plane embedded` for them';

export const FAULTS_EMBEDDED_ONLY =
  'API fault injection (errorRate, latencyMs, watchCutSeconds) is embedded-only: run `kwave sim --control-plane embedded` for it';

export type KubeletKind = 'simulated' | 'real';

export interface RealSimOptions {
  /**
   * simulated (default): kwave's node agent runs every node; real: one real kubelet process per
   * node (`kwave-control-plane kubelet`, kubemark's hollow kubelet), its node faults real too.
   */
  kubelet?: KubeletKind;
  /** The kubelet's timing jitter (0 = fixed timings), over the fixture's. */
  jitter?: number;
  pods?: number;
  fixture?: string | Fixture;
  host?: string;
  metricsPort?: number;
  kubeconfigOut?: string;
  timeScale?: number;
  seed?: number;
  /** Passed to the control plane (binary, extra users, extra flags). */
  controlPlane?: ControlPlaneOptions;
  /**
   * A control plane already running (emptied by resetRealWorld), used instead of starting one;
   * close() leaves it running. Tests share one per file this way.
   */
  sharedControlPlane?: ControlPlane;
  onWarning?: (message: string) => void;
}

export interface RealSim {
  backend: 'real';
  url: string;
  metricsUrl: string;
  kubeconfigPath?: string;
  /** The admin's bearer token (the kubeconfig's user). */
  token: string;
  caPem: string;
  kubeconfig(opts?: { context?: string; namespace?: string; token?: string }): string;
  controlPlane: ControlPlane;
  /** The nodes' kubelets: the node agent, or the real kubelets (then also `kubelets`). */
  agent: NodeAgent;
  kubelets?: RealKubelets;
  stats: RealStats;
  images: ImageTable;
  traffic: AppTraffic;
  world: WorldSummary;
  /** Milliseconds: control plane up, and world seeded (every runnable pod Running and Ready). */
  timings: { controlPlaneMs: number; worldMs: number };
  close(): Promise<void>;
}

/** HTTP errors of the API server as the admin port's (404 stays 404). */
function adminError(err: unknown): never {
  if (err instanceof KubeHttpError)
    throw new HttpError(err.code === 404 ? 404 : 409, err.status?.message ?? err.message);
  throw err;
}

/**
 * How fast the real node-lifecycle controller notices a silent node: a node whose lease is not
 * renewed for NODE_GRACE is marked Unknown, tainted, and its pods not Ready. Real clusters wait
 * 50 s (and kubelets renew every 10 s); the simulator renews every second and waits 8 s, so that
 * the NotReady fault takes effect within seconds yet a loaded machine's late renewal is no fault.
 */
const NODE_GRACE = '8s';
const LEASE_RENEW_MS = 1000;
/** A real kubelet renews its Lease every quarter of its duration: every second, as the agent. */
const KUBELET_LEASE_SECONDS = 4;
/**
 * After an outage of the apiserver or etcd longer than NODE_GRACE the controller marks every
 * node Unknown; like a kubelet, the agent then reports Ready again at its next status check.
 */
const NODE_STATUS_CHECK_MS = 2000;

/** The simulator's own user for seeding the world, apart from the admin that kwave and tests use. */
const SEED_USER = 'kwave-sim-seeder';

/** Starts the control plane from the cached build; exit 2 with the build command when there is none. */
export async function startOwnControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const binary = options.binary ?? findControlPlaneBinary(process.env, options.kubernetes);
  if (typeof binary !== 'string' && 'reason' in binary)
    throw new KwaveError('USAGE', binary.reason, ExitCode.BAD_INPUT);
  const users = [...(options.users ?? []), { name: SEED_USER, groups: ['system:masters'] }];
  const controllerManager = [
    `--node-monitor-grace-period=${NODE_GRACE}`,
    '--node-monitor-period=1s',
    ...(options.extraArgs?.['controller-manager'] ?? []),
  ];
  return startControlPlane({
    ...options,
    users,
    extraArgs: { ...options.extraArgs, 'controller-manager': controllerManager },
    binary: typeof binary === 'string' ? binary : binary.path,
  });
}

export async function startRealSim(options: RealSimOptions = {}): Promise<RealSim> {
  const fixture =
    typeof options.fixture === 'string'
      ? await loadFixture(options.fixture)
      : (options.fixture ?? defaultFixture(options.pods ?? 10));
  if (fixture.faults && Object.keys(fixture.faults).length > 0)
    throw new KwaveError('FIXTURE', `faults: ${FAULTS_EMBEDDED_ONLY}`, ExitCode.BAD_INPUT);
  const images = new ImageTable(fixture.images);
  const t0 = Date.now();
  const cp = options.sharedControlPlane ?? (await startOwnControlPlane(options.controlPlane));
  const controlPlaneMs = Date.now() - t0;
  const closers: (() => Promise<void> | void)[] = options.sharedControlPlane ? [] : [() => cp.close()];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    const podsPerNode = nodePodCapacity(fixture);
    const timing = timingOf(fixture, options.jitter);
    const timeScale = (options.timeScale ?? 1) * (fixture.timeScale ?? 1);
    const missingImages = Object.fromEntries(
      fixture.nodes.filter((n) => n.missingImages?.length).map((n) => [n.name, n.missingImages!]),
    );
    const kubelets =
      options.kubelet === 'real'
        ? await startRealKubelets({
            binary: cp.binary,
            url: cp.url,
            caPem: cp.caPem,
            watchToken: cp.agentToken,
            // The simulator's own user (system:masters) asks for each node's certificate.
            bootstrapToken: cp.tokens[SEED_USER] ?? cp.adminToken,
            nodes: fixture.nodes,
            podsPerNode,
            images,
            timing,
            timeScale,
            missingImages,
            leaseDurationSeconds: KUBELET_LEASE_SECONDS,
            statusUpdateMs: NODE_STATUS_CHECK_MS,
            onWarning: options.onWarning,
          })
        : undefined;
    const agent: NodeAgent =
      kubelets ??
      (await startNodeAgent({
        url: cp.url,
        caPem: cp.caPem,
        token: cp.agentToken,
        nodes: fixture.nodes,
        podsPerNode,
        images,
        timing,
        timeScale,
        seed: options.seed ?? fixture.seed ?? 1,
        missingImages,
        onWarning: options.onWarning,
        leaseRenewMs: LEASE_RENEW_MS,
        nodeStatusCheckMs: NODE_STATUS_CHECK_MS,
      }));
    closers.push(() => agent.close());
    const stats = new RealStats(cp.auditLogPath, [cp.agentUser, SEED_USER]);
    const traffic = new AppTraffic({ images, requestsPerSecond: fixture.traffic?.requestsPerSecond });
    const stopReadiness = followPodReadiness(agent, (pod, ready) => {
      // Pods that run to completion (restartPolicy Never/OnFailure: pre-pull's pullers, Jobs) serve nothing: not counted.
      if (restartPolicyOf(pod) === 'Always')
        stats.counts.setPodReady(pod.metadata.namespace ?? '', pod.metadata.name, ready ?? true);
      traffic.onReadiness(pod, ready);
    });
    closers.push(() => stopReadiness());
    // The world is seeded (and pods deleted through the admin port) as the simulator's own user,
    // so that the audit log shows kwave's requests alone under the admin user.
    const admin = new KubeHttp({
      url: cp.url,
      caPem: cp.caPem,
      token: cp.tokens[SEED_USER] ?? cp.adminToken,
      userAgent: 'kwave-sim/seed',
    });
    closers.push(() => admin.close());
    const tWorld = Date.now();
    const world = await seedRealWorld(admin, agent, fixture, images);
    const worldMs = Date.now() - tWorld;
    // The seeding's own requests are not the clients'.
    stats.reset();

    const control: SimControl = {
      stats: () => stats.snapshot(),
      resetStats: () => stats.reset(),
      faults: FAULTS_EMBEDDED_ONLY,
      admission: ADMISSION_EMBEDDED_ONLY,
      traffic,
      images,
      deletePod: async (namespace, name, grace) => {
        const path = `/api/v1/namespaces/${namespace}/pods/${name}`;
        const body = {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          ...(grace === undefined ? {} : { gracePeriodSeconds: grace }),
        };
        const pod = await admin.request<KubeObject>('DELETE', path, body).catch(adminError);
        const removed = await admin.request('GET', path).then(
          (p) => (p as KubeObject).metadata.uid !== pod.metadata.uid,
          () => true,
        );
        return {
          namespace,
          name,
          uid: pod.metadata.uid,
          deletionTimestamp: pod.metadata.deletionTimestamp ?? null,
          removed,
        };
      },
      setNodeReady: async (name, ready) => {
        if (!agent.nodeNames().includes(name)) throw new HttpError(404, `nodes "${name}" not found`);
        await agent.setNodeReady(name, ready);
        // As on the embedded backend, the answer comes once the fault (or its end) has taken effect.
        await (ready ? untilNodeBack(admin, name) : untilNodePodsNotReady(agent, name));
      },
      ...(agent.crashContainer
        ? {
            crashContainer: async (namespace: string, name: string, container: string | undefined) =>
              agent.crashContainer!(namespace, name, container),
          }
        : {}),
      deleteNode: async (name) => {
        await admin.request('DELETE', `/api/v1/nodes/${name}`).catch(adminError);
      },
      ...(kubelets
        ? {
            restartKubelet: async (name: string) => {
              if (!kubelets.nodeNames().includes(name)) throw new HttpError(404, `nodes "${name}" not found`);
              await kubelets.restartKubelet(name);
            },
          }
        : {}),
    };
    const adminServer = await startAdminServer({
      control,
      host: options.host ?? '127.0.0.1',
      port: options.metricsPort ?? 0,
    });
    closers.push(() => adminServer.close());
    const kubeconfig = (k: { context?: string; namespace?: string; token?: string } = {}) => cp.kubeconfig(k);
    if (options.kubeconfigOut) await writeKubeconfig(options.kubeconfigOut, kubeconfig());
    let closing: Promise<void> | undefined;
    return {
      backend: 'real',
      url: cp.url,
      metricsUrl: adminServer.url,
      kubeconfigPath: options.kubeconfigOut,
      token: cp.adminToken,
      caPem: cp.caPem,
      kubeconfig,
      controlPlane: cp,
      agent,
      ...(kubelets ? { kubelets } : {}),
      stats,
      images,
      traffic,
      world,
      timings: { controlPlaneMs, worldMs },
      close: () => (closing ??= closeAll()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
