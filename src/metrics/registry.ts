// kwave's own Prometheus metrics (docs/metrics.md), on a registry of their own so that
// embedding programs keep their global registry untouched. Methods are named for rollout events;
// the executor calls them and never touches prom-client directly.
import { FAILURE_REASONS } from '../inplace/completion.js';
import { GATE_CHECK_RESULTS, MEASUREMENT_PHASES, type GateCheckResult } from '../gates/types.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type LabelValues } from 'prom-client';
import { ROLLOUT_PHASES, type RolloutPhase } from '../rollout/events.js';
import { POD_STATES, type PodState } from '../rollout/podCounts.js';
import { NOTIFY_RESULTS, type NotifyResult } from '../notify/notifier.js';

// The label values of kwave_rollout_phase and kwave_rollout_pods are the rollout's own words.
export { POD_STATES, ROLLOUT_PHASES };

/**
 * Failure reasons set to zero for every wave up front, so that "failures per wave" has a series
 * to chart even in a clean run. Any other reason string is accepted too; it just appears on first use.
 */
const KNOWN_FAILURE_REASONS: readonly string[] = [...FAILURE_REASONS, 'DigestMismatch', 'Timeout'];

const ROLLBACK_RESULTS = ['succeeded', 'failed'] as const;
export type RollbackResult = (typeof ROLLBACK_RESULTS)[number];

/**
 * Upgrade durations run from about a second (cached image, fast start) to the default pod
 * timeout of five minutes and beyond; these edges keep both ends readable for p50/p95.
 */
const UPGRADE_DURATION_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200];

/** API latencies: a loaded API server answers writes in milliseconds to seconds (client-go's rest_client buckets, finer at the low end). */
const KUBE_REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface KwaveMetricsOptions {
  /** The plan's name: the `plan` label of every kwave_ series. */
  plan: string;
  /**
   * A multi-cluster plan's cluster names: every kwave_ series then also has the label `cluster`,
   * and each cluster's rollout reports through `forCluster(name)`. Left out for a plan of one
   * cluster, whose series keep the labels they always had.
   */
  clusters?: readonly string[];
  /** Also collect Node's default process metrics into the registry (default true). */
  processMetrics?: boolean;
}

/** The labels every kwave_ series has: `plan`, and `cluster` in a multi-cluster plan's. */
type L = 'plan' | 'cluster';
type Base = { plan: string; cluster?: string };

/** The prom-client objects of one registry; a plan's cluster views share them. */
function createSeries(registry: Registry, multiCluster: boolean) {
  const registers = [registry];
  const base: L[] = multiCluster ? ['plan', 'cluster'] : ['plan'];
  const names = <T extends string>(...more: T[]) => [...base, ...more];
  return {
    pods: new Gauge({
      name: 'kwave_rollout_pods',
      help: 'Selected pods of the rollout by state.',
      labelNames: names('state'),
      registers,
    }),
    completed: new Counter({
      name: 'kwave_pod_upgrades_completed_total',
      help: 'Pod upgrades confirmed complete by the container ImageID, by wave.',
      labelNames: names('wave'),
      registers,
    }),
    failed: new Counter({
      name: 'kwave_pod_upgrades_failed_total',
      help: 'Pod upgrades that failed, by wave and reason.',
      labelNames: names('wave', 'reason'),
      registers,
    }),
    rollbacks: new Counter({
      name: 'kwave_pod_rollbacks_total',
      help: 'Pods rolled back in place, by result.',
      labelNames: names('result'),
      registers,
    }),
    wave: new Gauge({
      name: 'kwave_rollout_wave',
      help: 'Current wave, 1-based (0 before the first).',
      labelNames: names(),
      registers,
    }),
    waves: new Gauge({
      name: 'kwave_rollout_waves',
      help: 'Number of waves in the plan.',
      labelNames: names(),
      registers,
    }),
    phase: new Gauge({
      name: 'kwave_rollout_phase',
      help: 'Rollout phase: 1 for the current phase, 0 for the others.',
      labelNames: names('phase'),
      registers,
    }),
    duration: new Histogram({
      name: 'kwave_pod_upgrade_duration_seconds',
      help: 'Time from a pod upgrade start (gate closed) to its confirmed completion.',
      labelNames: names(),
      buckets: UPGRADE_DURATION_BUCKETS,
      registers,
    }),
    resize: new Histogram({
      name: 'kwave_pod_resize_seconds',
      help: 'Time from a pod resize start (its state written, or its gate closed) to the resources confirmed by the kubelet and the pod Ready.',
      labelNames: names(),
      buckets: UPGRADE_DURATION_BUCKETS,
      registers,
    }),
    unready: new Histogram({
      name: 'kwave_pod_unready_seconds',
      help: 'Time an upgraded pod was not Ready during its upgrade (drain to Ready again): what pre-pull shortens.',
      labelNames: names(),
      buckets: UPGRADE_DURATION_BUCKETS,
      registers,
    }),
    unavailable: new Gauge({
      name: 'kwave_unavailable_pods',
      help: 'Selected pods not Ready right now.',
      labelNames: names(),
      registers,
    }),
    maxUnavailable: new Gauge({
      name: 'kwave_max_unavailable',
      help: 'The maxUnavailable budget, as a number of pods.',
      labelNames: names(),
      registers,
    }),
    gateChecks: new Counter({
      name: 'kwave_gate_checks_total',
      help: 'Gate checks by gate and result.',
      labelNames: names('gate', 'result'),
      registers,
    }),
    gateMeasurements: new Counter({
      name: 'kwave_gate_measurements_total',
      help: 'Gate measurements by gate, phase (successful, failed, inconclusive, error) and whether the gate is a dry run.',
      labelNames: names('gate', 'result', 'dry_run'),
      registers,
    }),
    kubeRequests: new Counter({
      name: 'kwave_kube_requests_total',
      help: 'Kubernetes API requests made by kwave, by verb, resource and HTTP status code.',
      labelNames: names('verb', 'resource', 'code'),
      registers,
    }),
    kubeRequestDuration: new Histogram({
      name: 'kwave_kube_request_duration_seconds',
      help: 'Kubernetes API request latency as kwave sees it (send to answer, after its own queue and rate limit), by verb and resource; watches are not timed.',
      labelNames: names('verb', 'resource'),
      buckets: KUBE_REQUEST_BUCKETS,
      registers,
    }),
    notifications: new Counter({
      name: 'kwave_notifications_total',
      help: 'Notifications (spec.notify) by result: sent, failed (after its retries), or dropped (a queue too long, or kwave exiting).',
      labelNames: names('result'),
      registers,
    }),
  };
}
type Series = ReturnType<typeof createSeries>;

/**
 * A plan's metrics. For a multi-cluster plan the instance made with `clusters` holds the registry
 * (serve and push that one) and `forCluster(name)` gives each cluster's view, whose series carry
 * `cluster="name"`; the instance itself then writes no series of its own.
 */
export class KwaveMetrics {
  readonly registry: Registry;
  readonly plan: string;
  /** This view's cluster; undefined for a one-cluster plan (and a multi-cluster plan's root). */
  readonly cluster: string | undefined;
  private readonly series: Series;
  private readonly base: Base;
  private readonly requestLabelSets = new Map<
    string,
    { withCode: LabelValues<string>; withoutCode: LabelValues<string> }
  >();
  private unavailable: [number, number] = [NaN, NaN];
  private readonly views = new Map<string, KwaveMetrics>();
  private readonly clusterNames: readonly string[] | undefined;
  private currentPhase: RolloutPhase = 'Pending';
  /** What kwave_rollout_pods was last set to, by state: a pod's start or end moves two of them. */
  private readonly podStates = new Map<PodState, number>();

  constructor(options: KwaveMetricsOptions, shared?: { registry: Registry; series: Series; cluster: string }) {
    this.plan = options.plan;
    this.clusterNames = shared ? undefined : options.clusters;
    this.cluster = shared?.cluster;
    this.base = shared ? { plan: options.plan, cluster: shared.cluster } : { plan: options.plan };
    if (shared) {
      this.registry = shared.registry;
      this.series = shared.series;
    } else {
      this.registry = new Registry();
      this.series = createSeries(this.registry, options.clusters !== undefined);
      if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    }
    if (this.clusterNames) {
      for (const c of this.clusterNames)
        this.views.set(
          c,
          new KwaveMetrics(
            { plan: options.plan, processMetrics: false },
            { registry: this.registry, series: this.series, cluster: c },
          ),
        );
    } else this.initializeSeries();
  }

  /** The view of one cluster of a multi-cluster plan (its series labelled `cluster`). */
  forCluster(name: string): KwaveMetrics {
    const view = this.views.get(name);
    if (!view)
      throw new Error(
        `bug: no metrics for cluster "${name}" (known: ${[...this.views.keys()].join(', ') || 'none, a one-cluster plan'})`,
      );
    return view;
  }

  /** Every series a dashboard reads exists from the start, so panels show 0 rather than "No data". */
  private initializeSeries(): void {
    const b = this.base;
    const m = this.series;
    this.setPodStates({});
    this.setPhase('Pending');
    for (const result of ROLLBACK_RESULTS) m.rollbacks.inc({ ...b, result }, 0);
    m.wave.set(b, 0);
    m.waves.set(b, 0);
    m.unavailable.set(b, 0);
    m.maxUnavailable.set(b, 0);
    m.duration.zero(b);
    m.unready.zero(b);
    for (const result of NOTIFY_RESULTS) m.notifications.inc({ ...b, result }, 0);
  }

  /** The plan's wave count; also creates the per-wave series at zero. */
  declareWaves(count: number): void {
    this.series.waves.set(this.base, count);
    for (let w = 1; w <= count; w++) {
      const wave = String(w);
      this.series.completed.inc({ ...this.base, wave }, 0);
      for (const reason of KNOWN_FAILURE_REASONS) this.series.failed.inc({ ...this.base, wave, reason }, 0);
    }
  }

  /** The plan's gate names; creates their check series at zero. */
  declareGates(names: readonly string[], dryRun: ReadonlySet<string> = new Set()): void {
    for (const gate of names) {
      for (const result of GATE_CHECK_RESULTS) this.series.gateChecks.inc({ ...this.base, gate, result }, 0);
      for (const result of MEASUREMENT_PHASES)
        this.series.gateMeasurements.inc({ ...this.base, gate, result, dry_run: String(dryRun.has(gate)) }, 0);
    }
  }

  setPhase(phase: RolloutPhase): void {
    this.currentPhase = phase;
    for (const p of ROLLOUT_PHASES) this.series.phase.set({ ...this.base, phase: p }, p === phase ? 1 : 0);
  }

  get phaseNow(): RolloutPhase {
    return this.currentPhase;
  }

  /** The wave now running (1-based). */
  setWave(wave: number): void {
    this.series.wave.set(this.base, wave);
  }

  /** Pod counts by state; states left out are set to 0. Only the counts that changed are written (each write hashes its labels). */
  setPodStates(counts: Partial<Record<PodState, number>>): void {
    for (const state of POD_STATES) {
      const n = counts[state] ?? 0;
      if (this.podStates.get(state) === n) continue;
      this.podStates.set(state, n);
      this.series.pods.set({ ...this.base, state }, n);
    }
  }

  /** How long an upgraded pod was not Ready during its upgrade. */
  podUnready(seconds: number): void {
    this.series.unready.observe(this.base, seconds);
  }

  setUnavailable(unavailable: number, maxUnavailable: number): void {
    // Told on every change of a selected pod: the gauges are set only when the figures move.
    if (unavailable === this.unavailable[0] && maxUnavailable === this.unavailable[1]) return;
    this.unavailable = [unavailable, maxUnavailable];
    this.series.unavailable.set(this.base, unavailable);
    this.series.maxUnavailable.set(this.base, maxUnavailable);
  }

  /**
   * A pod's upgrade is complete by the completion rule (new ImageID seen, running, Ready).
   * Call only then: this is what `kwave_pod_upgrades_completed_total` promises its readers.
   */
  podUpgradeConfirmedByImageID(wave: number, durationSeconds: number): void {
    this.series.completed.inc({ ...this.base, wave: String(wave) });
    this.series.duration.observe(this.base, durationSeconds);
  }

  /** A pod's resize was confirmed by the kubelet (status resources at the target, Ready). */
  podResized(durationSeconds: number): void {
    this.series.resize.observe(this.base, durationSeconds);
  }

  /** A pod's upgrade failed; `reason` is a waiting reason, `DigestMismatch` or `Timeout`. */
  podUpgradeFailed(wave: number, reason: string): void {
    this.series.failed.inc({ ...this.base, wave: String(wave), reason });
  }

  podRolledBack(result: RollbackResult): void {
    this.series.rollbacks.inc({ ...this.base, result });
  }

  gateChecked(gate: string, result: GateCheckResult): void {
    this.series.gateChecks.inc({ ...this.base, gate, result });
  }

  /** One measurement of a gate (Prometheus query or webhook call), by its phase. */
  gateMeasured(gate: string, phase: string, dryRun: boolean): void {
    this.series.gateMeasurements.inc({ ...this.base, gate, result: phase, dry_run: String(dryRun) });
  }

  /**
   * One Kubernetes API request. `code` is the HTTP status; use 0 when no answer came
   * (connection refused, timeout), so errors still show under `code!~"2.."`.
   */
  kubeRequest(verb: string, resource: string, code: number | string, seconds?: number): void {
    const labels = this.requestLabels(verb, resource, String(code));
    this.series.kubeRequests.inc(labels.withCode);
    if (seconds !== undefined) this.series.kubeRequestDuration.observe(labels.withoutCode, seconds);
  }

  /** The label sets of a kind of request, made once each: three requests a pod went through here. */
  private requestLabels(
    verb: string,
    resource: string,
    code: string,
  ): { withCode: LabelValues<string>; withoutCode: LabelValues<string> } {
    const key = `${verb} ${resource} ${code}`;
    let labels = this.requestLabelSets.get(key);
    if (!labels) {
      labels = { withCode: { ...this.base, verb, resource, code }, withoutCode: { ...this.base, verb, resource } };
      this.requestLabelSets.set(key, labels);
    }
    return labels;
  }

  /** One notification ended (spec.notify). */
  notification(result: NotifyResult): void {
    this.series.notifications.inc({ ...this.base, result });
  }

  /** The exposition text, as served at /metrics. */
  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
