// A chaos scenario, drawn from its seed alone (so a seed replays it exactly): the fleet and plan,
// and which faults hit it — API errors, latency, watch cuts, a concurrent writer, deletions, a
// node going NotReady, a failing target image, SIGKILLs of the runner, a second runner from
// another PID namespace, a runner with a skewed clock. On the real control plane the API faults
// (served by the embedded API server only) give way to the real one's: kube-apiserver restarted,
// etcd paused, the watch cache emptied under old resourceVersions (410), a node's heartbeats
// stopped until the node-lifecycle controller taints it, kwave's watches slowed and cut by a proxy.
import { seededRandom } from '../../src/sim/clock.js';

export type Backend = 'embedded' | 'real';
export type KubeletKind = 'simulated' | 'real';

export interface Scenario {
  seed: number;
  pods: number;
  concurrency: number;
  maxUnavailable: number;
  waves: (number | string)[];
  /** nginx:1.25.3 (good) or nginx:broken (the pull fails: halt and roll back). */
  image: string;
  rollback: 'failed' | 'all';
  faults: { errorRate: number; errorCodes: (500 | 503 | 429)[]; latencyMs: number; watchCutSeconds: number };
  /** Label/annotation patches of selected pods: one every this many ms (0 = none). */
  writerEveryMs: number;
  /** Pods deleted mid-flight, each at a moment (ms after the first start). */
  deletions: number[];
  /** A node NotReady at `atMs` for `forMs`. */
  nodeFlap?: { node: string; atMs: number; forMs: number };
  /** Moments (ms after that run's start) at which successive runs are SIGKILLed. */
  kills: number[];
  /** A second runner started at once with the first, from another PID namespace. */
  twoRunners: boolean;
  /** Clock offset of the second runner (or of the only one): 0, +120 s or -120 s. */
  skewSeconds: number;
  backend: Backend;
  /** On the real control plane: kwave's node agent (simulated, the default) or one real kubelet process per node. */
  kubelet?: KubeletKind;
  /** The real control plane's faults, at moments (ms after kwave's first image patch). */
  real?: RealFaults;
  /**
   * Embedded only: admission refuses every patch of one pod (the `podIndex`-th by name, modulo the
   * fleet), as a webhook (403) or a policy (422) would: that pod fails, the run halts (exit 3).
   */
  admissionRefusal?: { podIndex: number; code: 403 | 422 };
  /**
   * The Node object deleted `atMs` after kwave's first image patch (another node than the flap's):
   * its pods are the pod GC's, which marks them Failed and deletes them after its quarantine.
   */
  nodeDeletion?: { node: string; atMs: number };
  /**
   * Pods evicted mid-flight: the `nth` pod whose gate kwave closes (`drained`) or whose image it
   * patches (`patched`), at that very change, deleted with `graceSeconds` as an eviction deletes
   * (embedded: the graceful DELETE an admitted eviction makes; real: the Eviction API).
   */
  evictions: { moment: 'drained' | 'patched'; nth: number; graceSeconds: number }[];
  /**
   * Containers that crash after their gate reopened on the target: the `nth` pod seen so, its
   * container exiting `afterMs` later (once; the kubelet restarts it at once).
   */
  crashes: { nth: number; afterMs: number }[];
  /**
   * A slow watch: every watch event `delayMs` late for `forMs`, from `atMs` after kwave's first
   * image patch (embedded: its API server's fault) or after the real faults are over (real: the
   * fault proxy in front of kube-apiserver, watchProxy.ts). On real, `cutAtEnd` also cuts kwave's open watch streams as the slow spell
   * ends, losing the events they still held.
   */
  slowWatch?: { atMs: number; forMs: number; delayMs: number; cutAtEnd?: boolean };
}

interface RealFaults {
  /** kube-apiserver stopped and started again (same port, same etcd). */
  apiserverRestartAtMs?: number;
  /** etcd stopped and started again (same ports, same data): the apiserver answers errors meanwhile, then reconnects. */
  etcdRestartAtMs?: number;
  /** etcd frozen (SIGSTOP) for `forMs`, then let run on (SIGCONT). */
  etcdPause?: { atMs: number; forMs: number };
  /** etcd compacted to its newest revision, then the apiserver restarted: every watch resumed from an older version is answered 410 Gone. */
  watchExpiryAtMs?: number;
  /**
   * Real kubelets only: the node's kubelet stopped and started again. Its runtime lives in its
   * process, so the node's containers start again too (restartCount + 1), as after a reboot.
   */
  kubeletRestart?: { node: string; atMs: number };
}

const TARGET_GOOD = 'nginx:1.25.3';
export const TARGET_BROKEN = 'nginx:broken';

/** Scenario `index` of a run with `seed`: its own seed, so one line replays it. */
export function scenarioSeed(seed: number, index: number): number {
  return (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(index + 1, 0xc2b2ae35)) >>> 0;
}

export function drawScenario(
  seed: number,
  backend: Backend = 'embedded',
  kubelet: KubeletKind = 'simulated',
): Scenario {
  const r = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const chance = (p: number) => r() < p;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

  const pods = int(5, 10);
  const concurrency = int(1, 3);
  const maxUnavailable = concurrency + int(0, 1);
  const waves = pick<(number | string)[]>([[1, '100%'], [1, '50%', '100%'], ['30%', '100%'], ['100%']]);
  const errorCodes = (['500', '503', '429'] as const).filter(() => chance(0.6)).map(Number) as (500 | 503 | 429)[];
  const faults = {
    errorRate: chance(0.8) ? Math.round(r() * 100) / 1000 : 0, // up to 10%
    errorCodes: errorCodes.length ? errorCodes : [503 as const],
    latencyMs: chance(0.5) ? int(1, 40) : 0,
    watchCutSeconds: chance(0.5) ? int(1, 4) : 0,
  };
  const kills = Array.from({ length: pick([0, 0, 1, 1, 2, 3]) }, () => int(300, 4000));
  const twoRunners = chance(0.3);
  const skewSeconds = chance(0.3) ? pick([120, -120]) : 0;
  const drawn: Scenario = {
    seed,
    pods,
    concurrency,
    maxUnavailable,
    waves,
    image: chance(0.3) ? TARGET_BROKEN : TARGET_GOOD,
    rollback: pick(['failed', 'all'] as const),
    faults,
    writerEveryMs: chance(0.6) ? int(50, 400) : 0,
    deletions: Array.from({ length: pick([0, 0, 1, 2]) }, () => int(500, 5000)),
    nodeFlap: chance(0.3)
      ? { node: pick(['sim-node-1', 'sim-node-2', 'sim-node-3']), atMs: int(300, 3000), forMs: int(500, 3000) }
      : undefined,
    kills,
    evictions: [],
    crashes: [],
    twoRunners,
    skewSeconds,
    backend,
  };
  // Drawn after everything else, so an embedded seed replays as it did before real faults existed
  // (and, but for the new faults, before the admission refusal and the pod faults did).
  if (backend === 'real') {
    const real = withPodFaults(withRealFaults(drawn, r), r);
    return withRealSlowWatch(kubelet === 'real' ? withKubeletFaults(real, r) : real, r);
  }
  if (chance(0.25)) drawn.admissionRefusal = { podIndex: int(0, 9), code: pick([403, 422] as const) };
  const withFaults = withPodFaults(drawn, r);
  if (chance(0.25)) withFaults.slowWatch = { atMs: int(0, 2000), forMs: int(1000, 6000), delayMs: int(500, 3000) };
  return withFaults;
}

/** The faults both backends make the same way: a node deleted, evictions mid-flight, crashes after the gate reopened. */
function withPodFaults(s: Scenario, r: () => number): Scenario {
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const chance = (p: number) => r() < p;
  const nodes = ['sim-node-1', 'sim-node-2', 'sim-node-3'].filter((n) => n !== s.nodeFlap?.node);
  const nodeDeletion = chance(0.2) ? { node: nodes[int(0, nodes.length - 1)]!, atMs: int(0, 1500) } : undefined;
  const evictions = Array.from({ length: chance(0.3) ? int(1, 2) : 0 }, () => ({
    moment: chance(0.5) ? ('drained' as const) : ('patched' as const),
    nth: int(1, 3),
    graceSeconds: int(1, 5),
  }));
  const drawn = Array.from({ length: chance(0.3) ? int(1, 3) : 0 }, () => ({
    nth: int(1, s.pods),
    afterMs: int(0, 1500),
  }));
  // One crash a pod, as the fault is documented (docs/testing.md); drawn all the same, so a seed's
  // other faults replay as before. Two crashes of one pod within the kubelet's back-off is a crash
  // loop, which a re-run judges as such (a known gap: it may have counted the pod earlier).
  const crashes = drawn.filter((c, i) => drawn.findIndex((d) => d.nth === c.nth) === i);
  // A failing image never reopens a gate on the target: no crash to wait for.
  return {
    ...s,
    ...(nodeDeletion ? { nodeDeletion } : {}),
    evictions,
    crashes: s.image === TARGET_BROKEN ? [] : crashes,
  };
}

/**
 * The real control plane's version of a scenario: no API error/latency/cut injection (kube-apiserver
 * answers for itself), at least one real fault, a node silent long enough for
 * the node-lifecycle controller (8 s grace, see src/sim/real) to mark it NotReady and taint it.
 */
function withRealFaults(s: Scenario, r: () => number): Scenario {
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const chance = (p: number) => r() < p;
  const real: RealFaults = {};
  for (let tries = 0; Object.keys(real).length === 0 && tries < 8; tries++) {
    if (chance(0.45)) real.apiserverRestartAtMs = int(0, 3000);
    if (chance(0.45)) real.etcdPause = { atMs: int(0, 3000), forMs: int(2000, 5000) };
    if (chance(0.45)) real.watchExpiryAtMs = int(0, 3000);
  }
  if (chance(0.45)) real.etcdRestartAtMs = int(0, 3000);
  const nodeFlap = s.nodeFlap ?? (chance(0.2) ? { node: 'sim-node-2', atMs: 0, forMs: 0 } : undefined);
  return {
    ...s,
    faults: { errorRate: 0, errorCodes: [503], latencyMs: 0, watchCutSeconds: 0 },
    nodeFlap: nodeFlap && { node: nodeFlap.node, atMs: int(300, 4000), forMs: int(12_000, 20_000) },
    kills: s.kills.map((at) => at + int(0, 4000)),
    real,
  };
}

/**
 * On real kubelets, drawn after the real faults (a real seed replays as before): most scenarios
 * restart one kubelet mid-wave, never the node whose heartbeats stop (a stopped process cannot
 * be restarted until it is let run on).
 */
function withKubeletFaults(s: Scenario, r: () => number): Scenario {
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const nodes = ['sim-node-1', 'sim-node-2', 'sim-node-3'].filter((n) => n !== s.nodeFlap?.node);
  const node = nodes[int(0, nodes.length - 1)]!;
  const atMs = int(0, 4000);
  return { ...s, kubelet: 'real', real: { ...s.real, ...(r() < 0.7 ? { kubeletRestart: { node, atMs } } : {}) } };
}

/**
 * On the real control plane, drawn last (a real seed replays its other faults as before): a slow
 * watch through the fault proxy, longer than the embedded one (real kubelet timings), half the
 * time ended by a cut of kwave's watch streams.
 */
function withRealSlowWatch(s: Scenario, r: () => number): Scenario {
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  if (r() >= 0.35) return s;
  const slowWatch = { atMs: int(0, 3000), forMs: int(3000, 10_000), delayMs: int(500, 3000), cutAtEnd: r() < 0.5 };
  return { ...s, slowWatch };
}

/** Fault kinds a scenario injects, for the summary line. */
export function faultKinds(s: Scenario): string[] {
  const kinds: string[] = [];
  if (s.faults.errorRate > 0) kinds.push('api-errors');
  if (s.faults.latencyMs > 0) kinds.push('latency');
  if (s.faults.watchCutSeconds > 0) kinds.push('watch-cuts');
  if (s.writerEveryMs > 0) kinds.push('concurrent-writer');
  if (s.deletions.length > 0) kinds.push('pod-deletions');
  if (s.nodeFlap) kinds.push('node-not-ready');
  if (s.image === TARGET_BROKEN) kinds.push(`failing-image(rollback ${s.rollback})`);
  if (s.kills.length > 0) kinds.push('sigkill');
  if (s.twoRunners) kinds.push('two-runners');
  if (s.skewSeconds !== 0) kinds.push('skewed-clock');
  if (s.real?.apiserverRestartAtMs !== undefined) kinds.push('apiserver-restart');
  if (s.real?.etcdPause) kinds.push('etcd-pause');
  if (s.real?.watchExpiryAtMs !== undefined) kinds.push('watch-expiry-410');
  if (s.real?.kubeletRestart) kinds.push('kubelet-restart');
  if (s.admissionRefusal) kinds.push(`admission-refusal(${s.admissionRefusal.code})`);
  if (s.real?.etcdRestartAtMs !== undefined) kinds.push('etcd-restart');
  if (s.nodeDeletion) kinds.push('node-deletion');
  if (s.evictions.length > 0) kinds.push('eviction-mid-flight');
  if (s.crashes.length > 0) kinds.push('crash-after-gate');
  if (s.slowWatch) kinds.push(s.slowWatch.cutAtEnd ? 'slow-watch(then cut)' : 'slow-watch');
  return kinds;
}

export function planYaml(s: Scenario): string {
  return `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: chaos }
spec:
  target: { namespace: default, selector: { matchLabels: { app: demo } } }
  update: { containers: [{ name: nginx, image: "${s.image}" }] }
  strategy:
    waves: ${JSON.stringify(s.waves)}
    concurrency: ${s.concurrency}
    maxUnavailable: ${s.maxUnavailable}
    podTimeout: 5m
  failurePolicy: { maxFailed: 0, rollback: ${s.rollback} }
`;
}
