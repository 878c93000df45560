// kwave's own Prometheus metrics (DESIGN.md, "Metrics"), on a registry of their own so that
// embedding programs keep their global registry untouched. Methods are named for rollout events;
// the executor calls them and never touches prom-client directly.
import { FAILURE_REASONS } from '../inplace/completion.js';
import { GATE_CHECK_RESULTS, type GateCheckResult } from '../gates/types.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ROLLOUT_PHASES, type RolloutPhase } from '../rollout/events.js';
import { POD_STATES, type PodState } from '../rollout/podEnd.js';
import { NOTIFY_RESULTS, type NotifyResult } from '../notify/notifier.js';

// The label values of kwave_rollout_phase and kwave_rollout_pods are the rollout's own words.
export { POD_STATES, ROLLOUT_PHASES };

/**
 * Failure reasons set to zero for every wave up front, so that "failures per wave" has a series
 * to chart even in a clean run. Any other reason string is accepted too; it just appears on first use.
 */
export const KNOWN_FAILURE_REASONS: readonly string[] = [...FAILURE_REASONS, 'DigestMismatch', 'Timeout'];

export const ROLLBACK_RESULTS = ['succeeded', 'failed'] as const;
export type RollbackResult = (typeof ROLLBACK_RESULTS)[number];


/**
 * Upgrade durations run from about a second (cached image, fast start) to the default pod
 * timeout of five minutes and beyond; these edges keep both ends readable for p50/p95.
 */
export const UPGRADE_DURATION_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200];

export interface KwaveMetricsOptions {
  /** The plan's name: the `plan` label of every kwave_ series. */
  plan: string;
  /** Also collect Node's default process metrics into the registry (default true). */
  processMetrics?: boolean;
}

export class KwaveMetrics {
  readonly registry = new Registry();
  readonly plan: string;

  private readonly pods: Gauge<'plan' | 'state'>;
  private readonly completed: Counter<'plan' | 'wave'>;
  private readonly failed: Counter<'plan' | 'wave' | 'reason'>;
  private readonly rollbacks: Counter<'plan' | 'result'>;
  private readonly wave: Gauge<'plan'>;
  private readonly waves: Gauge<'plan'>;
  private readonly phase: Gauge<'plan' | 'phase'>;
  private readonly duration: Histogram<'plan'>;
  private readonly unavailable: Gauge<'plan'>;
  private readonly maxUnavailable: Gauge<'plan'>;
  private readonly gateChecks: Counter<'plan' | 'gate' | 'result'>;
  private readonly kubeRequests: Counter<'plan' | 'verb' | 'resource' | 'code'>;
  private readonly notifications: Counter<'plan' | 'result'>;
  private currentPhase: RolloutPhase = 'Pending';

  constructor(options: KwaveMetricsOptions) {
    this.plan = options.plan;
    const registers = [this.registry];
    this.pods = new Gauge({
      name: 'kwave_rollout_pods',
      help: 'Selected pods of the rollout by state.',
      labelNames: ['plan', 'state'],
      registers,
    });
    this.completed = new Counter({
      name: 'kwave_pod_upgrades_completed_total',
      help: 'Pod upgrades confirmed complete by the container ImageID, by wave.',
      labelNames: ['plan', 'wave'],
      registers,
    });
    this.failed = new Counter({
      name: 'kwave_pod_upgrades_failed_total',
      help: 'Pod upgrades that failed, by wave and reason.',
      labelNames: ['plan', 'wave', 'reason'],
      registers,
    });
    this.rollbacks = new Counter({
      name: 'kwave_pod_rollbacks_total',
      help: 'Pods rolled back in place, by result.',
      labelNames: ['plan', 'result'],
      registers,
    });
    this.wave = new Gauge({ name: 'kwave_rollout_wave', help: 'Current wave, 1-based (0 before the first).', labelNames: ['plan'], registers });
    this.waves = new Gauge({ name: 'kwave_rollout_waves', help: 'Number of waves in the plan.', labelNames: ['plan'], registers });
    this.phase = new Gauge({
      name: 'kwave_rollout_phase',
      help: 'Rollout phase: 1 for the current phase, 0 for the others.',
      labelNames: ['plan', 'phase'],
      registers,
    });
    this.duration = new Histogram({
      name: 'kwave_pod_upgrade_duration_seconds',
      help: 'Time from a pod upgrade start (gate closed) to its confirmed completion.',
      labelNames: ['plan'],
      buckets: UPGRADE_DURATION_BUCKETS,
      registers,
    });
    this.unavailable = new Gauge({ name: 'kwave_unavailable_pods', help: 'Selected pods not Ready right now.', labelNames: ['plan'], registers });
    this.maxUnavailable = new Gauge({
      name: 'kwave_max_unavailable',
      help: 'The maxUnavailable budget, as a number of pods.',
      labelNames: ['plan'],
      registers,
    });
    this.gateChecks = new Counter({
      name: 'kwave_gate_checks_total',
      help: 'Gate checks by gate and result.',
      labelNames: ['plan', 'gate', 'result'],
      registers,
    });
    this.kubeRequests = new Counter({
      name: 'kwave_kube_requests_total',
      help: 'Kubernetes API requests made by kwave, by verb, resource and HTTP status code.',
      labelNames: ['plan', 'verb', 'resource', 'code'],
      registers,
    });
    this.notifications = new Counter({
      name: 'kwave_notifications_total',
      help: 'Notifications (spec.notify) by result: sent, failed (after its retries), or dropped (a queue too long, or kwave exiting).',
      labelNames: ['plan', 'result'],
      registers,
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.initialiseSeries();
  }

  /** Every series a dashboard reads exists from the start, so panels show 0 rather than "No data". */
  private initialiseSeries(): void {
    const plan = this.plan;
    for (const state of POD_STATES) this.pods.set({ plan, state }, 0);
    this.setPhase('Pending');
    for (const result of ROLLBACK_RESULTS) this.rollbacks.inc({ plan, result }, 0);
    for (const result of NOTIFY_RESULTS) this.notifications.inc({ plan, result }, 0);
    this.wave.set({ plan }, 0);
    this.waves.set({ plan }, 0);
    this.unavailable.set({ plan }, 0);
    this.maxUnavailable.set({ plan }, 0);
    this.duration.zero({ plan });
  }

  /** The plan's wave count; also creates the per-wave series at zero. */
  declareWaves(count: number): void {
    this.waves.set({ plan: this.plan }, count);
    for (let w = 1; w <= count; w++) {
      const wave = String(w);
      this.completed.inc({ plan: this.plan, wave }, 0);
      for (const reason of KNOWN_FAILURE_REASONS) this.failed.inc({ plan: this.plan, wave, reason }, 0);
    }
  }

  /** The plan's gate names; creates their check series at zero. */
  declareGates(names: readonly string[]): void {
    for (const gate of names) for (const result of GATE_CHECK_RESULTS) this.gateChecks.inc({ plan: this.plan, gate, result }, 0);
  }

  setPhase(phase: RolloutPhase): void {
    this.currentPhase = phase;
    for (const p of ROLLOUT_PHASES) this.phase.set({ plan: this.plan, phase: p }, p === phase ? 1 : 0);
  }

  get phaseNow(): RolloutPhase {
    return this.currentPhase;
  }

  /** The wave now running (1-based). */
  setWave(wave: number): void {
    this.wave.set({ plan: this.plan }, wave);
  }

  /** Pod counts by state; states left out are set to 0. */
  setPodStates(counts: Partial<Record<PodState, number>>): void {
    for (const state of POD_STATES) this.pods.set({ plan: this.plan, state }, counts[state] ?? 0);
  }

  setUnavailable(unavailable: number, maxUnavailable: number): void {
    this.unavailable.set({ plan: this.plan }, unavailable);
    this.maxUnavailable.set({ plan: this.plan }, maxUnavailable);
  }

  /**
   * A pod's upgrade is complete by the completion rule (new ImageID seen, running, Ready).
   * Call only then: this is what `kwave_pod_upgrades_completed_total` promises its readers.
   */
  podUpgradeConfirmedByImageID(wave: number, durationSeconds: number): void {
    this.completed.inc({ plan: this.plan, wave: String(wave) });
    this.duration.observe({ plan: this.plan }, durationSeconds);
  }

  /** A pod's upgrade failed; `reason` is a waiting reason, `DigestMismatch` or `Timeout`. */
  podUpgradeFailed(wave: number, reason: string): void {
    this.failed.inc({ plan: this.plan, wave: String(wave), reason });
  }

  podRolledBack(result: RollbackResult): void {
    this.rollbacks.inc({ plan: this.plan, result });
  }

  gateChecked(gate: string, result: GateCheckResult): void {
    this.gateChecks.inc({ plan: this.plan, gate, result });
  }

  /** One notification ended (spec.notify). */
  notification(result: NotifyResult): void {
    this.notifications.inc({ plan: this.plan, result });
  }

  /**
   * One Kubernetes API request. `code` is the HTTP status; use 0 when no answer came
   * (connection refused, timeout), so errors still show under `code!~"2.."`.
   */
  kubeRequest(verb: string, resource: string, code: number | string): void {
    this.kubeRequests.inc({ plan: this.plan, verb, resource, code: String(code) });
  }

  /** The exposition text, as served at /metrics. */
  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
