// The simulated cluster as a library (`kwave/sim`): one call starts the store, the world from a
// fixture (or the default world), the kubelet, the API server (HTTPS, token) and the metrics and
// admin port; `close()` stops them all. Tests, the demo and the benchmarks start it this way.
import { restartPolicyOf } from './kubelet/pods.js';
import { Admission } from './apiserver/admission.js';
import { writeKubeconfig } from './apiserver/kubeconfig.js';
import { startAdminServer } from './adminServer.js';
import { embeddedControl } from './embeddedControl.js';
import { isLoopback } from './listen.js';
import { startApiServer } from './apiserver/index.js';
import { AppTraffic } from './appMetrics.js';
import { NO_FAULTS, parseFaults, type Faults } from './faults.js';
import { defaultFixture, loadFixture, timingOf, type Fixture } from './fixture.js';
import { ImageTable } from './images.js';
import { Kubelet } from './kubelet.js';
import { Scheduler } from './scheduler.js';
import { watchPodReadiness } from './readiness.js';
import { SimStats } from './stats.js';
import { Store } from './store.js';
import { buildWorld, type WorldSummary } from './world.js';
import { runDisruptionController } from './disruptionController.js';
import { mergeFaults } from './disruptions.js';
import { POD_GC_QUARANTINE_MS, runPodGc } from './podGc.js';

export interface SimOptions {
  /** Pods of the default world (default 10); ignored when a fixture is given. */
  pods?: number;
  /** A fixture file path, or a parsed fixture. */
  fixture?: string | Fixture;
  /** Loopback address to serve on (default 127.0.0.1). */
  host?: string;
  /** API server port; 0 (default) picks a free one. */
  port?: number;
  /** Metrics / admin port; 0 (default) picks a free one. */
  metricsPort?: number;
  /** Write a kubeconfig here once the API server serves. */
  kubeconfigOut?: string;
  /** Faults at start: `errorRate=0.1,latencyMs=50` or an object; over the fixture's. */
  faults?: string | Partial<Faults>;
  /** Multiplies every simulated duration, on top of the fixture's timeScale (default 1). */
  timeScale?: number;
  /** ± share of random variation on the kubelet's step durations, over the fixture's (0 = fixed timings, for benchmarks). */
  jitter?: number;
  /** PRNG seed (default: the fixture's, else 1). */
  seed?: number;
  /** The API server's bearer token (default: random). */
  token?: string;
  /** Events kept at most (default 20,000). */
  maxEvents?: number;
}

export interface Sim {
  /** `https://127.0.0.1:PORT` */
  url: string;
  /** `http://127.0.0.1:PORT`: /metrics, /sim/stats and the admin endpoints. */
  metricsUrl: string;
  /** Where the kubeconfig was written, if asked. */
  kubeconfigPath?: string;
  token: string;
  caPem: string;
  /** A kubeconfig (YAML) for the API server. */
  kubeconfig(opts?: { context?: string; namespace?: string }): string;
  store: Store;
  stats: SimStats;
  /** The live faults: change its fields (or POST /sim/faults) to switch faults at run time. */
  faults: Faults;
  /** Admission rules for writes (or POST /sim/admission): refuse them, or hold their answers. */
  admission: Admission;
  kubelet: Kubelet;
  images: ImageTable;
  traffic: AppTraffic;
  world: WorldSummary;
  close(): Promise<void>;
}

/**
 * Starts the simulated cluster. Throws KwaveError (FIXTURE) for a bad fixture file and Error for
 * bad options; on any failure after start, what was started is closed again.
 */
export async function startSim(options: SimOptions = {}): Promise<Sim> {
  const fixture =
    typeof options.fixture === 'string'
      ? await loadFixture(options.fixture)
      : (options.fixture ?? defaultFixture(options.pods ?? 10));
  const faults: Faults = { ...NO_FAULTS, errorCodes: [...NO_FAULTS.errorCodes] };
  if (fixture.faults) mergeFaults(faults, fixture.faults);
  if (typeof options.faults === 'string') Object.assign(faults, parseFaults(options.faults, faults));
  else if (options.faults) mergeFaults(faults, options.faults);

  const store = new Store();
  const stats = new SimStats();
  const images = new ImageTable(fixture.images);
  const kubeletTimeScale = (options.timeScale ?? 1) * (fixture.timeScale ?? 1);
  const kubelet = new Kubelet({
    store,
    images,
    timing: timingOf(fixture, options.jitter),
    timeScale: kubeletTimeScale,
    seed: options.seed ?? fixture.seed ?? 1,
    maxEvents: options.maxEvents,
    missingImages: Object.fromEntries(
      fixture.nodes.filter((n) => n.missingImages?.length).map((n) => [n.name, n.missingImages!]),
    ),
  });
  // Started first, the kubelet and the scheduler see the world's pods as they are created and
  // need no sweep over them.
  const scheduler = new Scheduler(store);
  kubelet.start();
  scheduler.start();
  const world = buildWorld(store, kubelet, images, fixture);
  const stopDisruption = runDisruptionController(store);
  const stopPodGc = runPodGc(store, { quarantineMs: POD_GC_QUARANTINE_MS * kubeletTimeScale });
  const traffic = new AppTraffic({ images, requestsPerSecond: fixture.traffic?.requestsPerSecond });
  const stopReadiness = watchPodReadiness(store, (pod, ready) => {
    // Pods that run to completion (restartPolicy Never/OnFailure: pre-pull's pullers, Jobs) serve nothing: not counted.
    if (restartPolicyOf(pod) === 'Always')
      stats.setPodReady(pod.metadata.namespace ?? '', pod.metadata.name, ready ?? true);
    traffic.onReadiness(pod, ready);
  });

  const closers: (() => Promise<void> | void)[] = [
    () => stopReadiness(),
    () => kubelet.stop(),
    () => scheduler.stop(),
    () => stopDisruption(),
    () => stopPodGc(),
  ];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    const host = options.host ?? '127.0.0.1';
    const admission = new Admission();
    const api = await startApiServer({
      store,
      stats,
      faults,
      admission,
      host,
      port: options.port ?? 0,
      token: options.token,
    });
    closers.push(() => api.close());
    // Run before the server closes (closers run last first): held answers would keep it open.
    closers.push(() => void admission.set([]));
    // The admin port has no auth: it stays on loopback even when the API server binds elsewhere.
    const adminHost = isLoopback(host) ? host : '127.0.0.1';
    const admin = await startAdminServer({
      control: embeddedControl({ store, stats, faults, admission, traffic, images, kubelet }),
      host: adminHost,
      port: options.metricsPort ?? 0,
    });
    closers.push(() => admin.close());
    if (options.kubeconfigOut) await writeKubeconfig(options.kubeconfigOut, api.kubeconfig());
    let closing: Promise<void> | undefined;
    return {
      url: api.url,
      metricsUrl: admin.url,
      kubeconfigPath: options.kubeconfigOut,
      token: api.token,
      caPem: api.caPem,
      kubeconfig: (k) => api.kubeconfig(k),
      store,
      stats,
      faults,
      admission,
      kubelet,
      images,
      traffic,
      world,
      close: () => (closing ??= closeAll()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

export { Store } from './store.js';
export { SimStats } from './stats.js';
export { NO_FAULTS, parseFaults, type Faults } from './faults.js';
export { defaultFixture, loadFixture, parseFixture, type Fixture } from './fixture.js';
export { ImageTable, defaultDigest, imageIdOf, parseImageRef } from './images.js';
export { Kubelet } from './kubelet.js';
