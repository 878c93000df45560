// Carries a plan across the fleet: waves in order; in each, at most `concurrency` pods in flight
// (p-limit) and a pod starts only while the unavailability budget allows; gates between waves;
// halting and in-place rollback on failures. It decides nothing per pod (decide.ts does) and
// prints nothing (it emits events). Resuming needs no state of its own: the selection is made
// again from the cluster, and pods left mid-flow carry their state in their annotation.
import pLimit from 'p-limit';
import type { V1Pod } from '@kubernetes/client-node';
import type { Plan } from '../plan/types.js';
import { runGate, gateAppliesAfterWave, type GateRun } from '../gates/index.js';
import { runPodFlow, type PodOutcome, type PodReader, type PodWriter } from '../inplace/executor.js';
import { conditionStatus, isPodReady, podKey } from '../inplace/podView.js';
import { readState } from '../inplace/state.js';
import { canStart, startBlocker, exceedsMaxFailed } from './budget.js';
import type { EventSink, PodResult, RolloutEventBody, RolloutPhase, WaveSummary } from './events.js';
import { selectFleet, type FleetSelection, type NodeZones, type SelectedPod } from './select.js';
import { windowState } from './window.js';
import { ExitCode } from '../errors.js';

/** The pod cache as the runner uses it: reads for the flows, and change notifications for the budget. */
export interface FleetView extends PodReader {
  list(namespace?: string): V1Pod[];
  onChange(listener: (change: { pod: V1Pod; type: 'added' | 'modified' | 'deleted' }) => void): () => void;
}

export interface Approvals {
  isApproved(wave: number): Promise<boolean>;
  waitForApproval(wave: number, signal?: AbortSignal): Promise<void>;
}

export interface RunnerDeps {
  writer: PodWriter;
  view: FleetView;
  zones?: NodeZones;
  sink: EventSink;
  now?: () => number;
  /** Sleeps `ms`; resolves false if `signal` aborted first. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<boolean>;
  /** First SIGINT/SIGTERM: start nothing new, let in-flight pods finish, then Paused. */
  stop: AbortSignal;
  /** Second signal: leave at once; flows stop between steps and stay resumable. */
  abort?: AbortSignal;
  approvals?: Approvals;
  /** Gate checks are counted here (KwaveMetrics fits). */
  gateMetrics?: { gateChecked(gate: string, result: 'passed' | 'failed' | 'inconclusive'): void };
  /** Gates of the wave before `wave` already passed in an earlier run (from the rollout record). */
  gatesPassed?: (wave: number) => boolean;
  /** Told the not-Ready count (selected pods, in-flight ones included) whenever it may have changed. */
  onUnavailable?: (unavailable: number, budget: number) => void;
  /** Passed to gates (prometheus, webhook): fetch, env, file reads. */
  gateIO?: { fetch?: typeof fetch; env?: Record<string, string | undefined>; readFile?: (path: string) => Promise<string> };
}

export interface RunResult {
  phase: RolloutPhase;
  exitCode: number;
  message: string;
  waves: WaveSummary[];
}

interface Tally {
  upgraded: number;
  failed: { pod: string; reason: string; message: string }[];
}

/** Runs the plan's upgrade from wherever the cluster stands. The selection must have no error problems (callers check, `kwave plan` shows them). */
export async function runRollout(plan: Plan, deps: RunnerDeps): Promise<RunResult> {
  return new Rollout(plan, deps).upgrade();
}

/** Reverts in place every pod this plan's revision upgraded, last wave first. */
export async function rollbackRollout(plan: Plan, deps: RunnerDeps): Promise<RunResult> {
  return new Rollout(plan, deps).rollbackAll();
}

class Rollout {
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly inFlight = new Set<string>();
  /** Selected pods not Ready now, kept current from the cache's change feed. */
  private readonly notReady = new Set<string>();
  private selectedKeys = new Set<string>();
  private wakeups: (() => void)[] = [];
  /** Why the rollout halted, once it has. */
  private halted: string | undefined;
  private readonly tally: Tally = { upgraded: 0, failed: [] };
  private readonly summaries: WaveSummary[] = [];
  private currentWave = 0;
  private budget = 1;
  private maxFailed = 0;
  /** A rollback after a halt runs to its end whatever stopped the rollout; only a hard abort or a fatal error stops it. */
  private rollingBack = false;
  private rollbackSet = new Set<string>();
  /** An unexpected error of one pod's flow (403, a long outage): nothing more starts, then it is rethrown. */
  private fatal: unknown;

  constructor(
    private readonly plan: Plan,
    private readonly deps: RunnerDeps,
  ) {
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
    // A stop wakes every pod waiting for the budget, so they can give up.
    deps.stop.addEventListener('abort', () => this.wake(), { once: true });
    deps.abort?.addEventListener('abort', () => this.wake(), { once: true });
  }

  private emit(body: RolloutEventBody): void {
    this.deps.sink({ time: new Date(this.now()).toISOString(), plan: this.plan.name, ...body } as Parameters<EventSink>[0]);
  }

  private get stopping(): boolean {
    if (this.deps.abort?.aborted || this.fatal !== undefined) return true;
    return !this.rollingBack && (this.deps.stop.aborted || this.halted !== undefined);
  }

  // ---- the budget ----------------------------------------------------------------------------

  private track(selection: FleetSelection): () => void {
    this.selectedKeys = new Set(selection.selected.map((s) => `${s.namespace}/${s.name}`));
    this.budget = selection.budget;
    for (const s of selection.selected) if (!isPodReady(s.pod)) this.notReady.add(`${s.namespace}/${s.name}`);
    return this.deps.view.onChange(({ pod, type }) => {
      const key = podKey(pod);
      if (!this.selectedKeys.has(key)) return;
      if (type === 'deleted' || isPodReady(pod)) this.notReady.delete(key);
      else this.notReady.add(key);
      this.wake();
    });
  }

  private wake(): void {
    this.deps.onUnavailable?.(this.unreadyNotInFlight() + this.inFlight.size, this.budget);
    const w = this.wakeups;
    this.wakeups = [];
    for (const f of w) f();
  }

  /** Resolves on the next pod change or pod end (or stop). */
  private nextChange(): Promise<void> {
    return new Promise((resolve) => this.wakeups.push(resolve));
  }

  /**
   * Not-Ready selected pods not in flight, leaving out `candidate` (the pod about to start) and
   * the pods a rollback is about to revert (drained failures: reverting them frees, not takes, budget).
   */
  private unreadyNotInFlight(candidate?: string): number {
    let n = 0;
    for (const k of this.notReady) if (!this.inFlight.has(k) && k !== candidate && !this.rollbackSet.has(k)) n++;
    return n;
  }

  /**
   * Waits until one more pod may start and counts `key` in flight; false when the rollout stops
   * first. The slot is taken in the same turn as the check: waiters wake together, and a slot
   * taken one await later would let each of them pass the same check (budget overshoot).
   * A candidate already not Ready (left drained by a killed run, say) is not counted twice: its
   * start adds no unavailable pod, and counting it would let drained pods block their own resume.
   */
  private async acquire(wave: number, key: string): Promise<boolean> {
    let reported = false;
    for (;;) {
      if (this.stopping) return false;
      const req = { unreadyNotInFlight: this.unreadyNotInFlight(key), inFlight: this.inFlight.size, budget: this.budget, concurrency: this.plan.strategy.concurrency };
      if (canStart(req)) {
        this.inFlight.add(key);
        return true;
      }
      if (startBlocker(req) === 'budget') {
        const holders = [...this.notReady].filter((k) => !this.inFlight.has(k) && k !== key);
        // Failed pods keep their gate closed, so if only they hold the budget and nothing is in
        // flight, nothing will ever free it: halt rather than wait forever.
        const failed = new Set(this.tally.failed.map((f) => f.pod));
        if (!this.rollingBack && this.inFlight.size === 0 && holders.length > 0 && holders.every((k) => failed.has(k))) {
          this.halt('failures', `the unavailability budget of ${this.budget} is held by pods that failed (${holders.join(', ')}): no other pod can start`);
          return false;
        }
        if (!reported) {
          reported = true;
          this.emit({ event: 'budget-wait', wave, unavailable: req.unreadyNotInFlight + req.inFlight, budget: this.budget, holders: holders.slice(0, 5) });
        }
      }
      await this.nextChange();
    }
  }

  // ---- pods ----------------------------------------------------------------------------------

  /** Runs `pods` through their flows under the concurrency limit and the budget. */
  private async runPods(pods: readonly SelectedPod[], wave: number, direction: 'upgrade' | 'rollback', summary: WaveSummary): Promise<void> {
    const limit = pLimit(this.plan.strategy.concurrency);
    let first: number | undefined;
    await Promise.all(
      pods.map((p) =>
        limit(async () => {
          const key = `${p.namespace}/${p.name}`;
          if (!(await this.acquire(wave, key))) return;
          this.wake();
          const began = this.now();
          first ??= began;
          this.emit({ event: 'pod-start', wave, pod: key });
          let outcome: PodOutcome;
          try {
            outcome = await runPodFlow(
              { namespace: p.namespace, name: p.name, uid: p.uid },
              {
                plan: this.plan.name,
                revision: this.plan.revision,
                wave,
                direction,
                containers: this.plan.update.containers,
                gate: this.plan.readinessGate,
                drainMs: this.plan.strategy.drainMs,
                podTimeoutMs: this.plan.strategy.podTimeoutMs,
                minReadyMs: this.plan.strategy.minReadyMs,
              },
              {
                writer: this.deps.writer,
                reader: this.deps.view,
                now: this.now,
                ...(this.deps.abort ? { signal: this.deps.abort } : {}),
                onStep: (step) => {
                  if (step.kind.startsWith('wait-') || step.kind === 'patch' || step.kind.endsWith('-gate')) {
                    this.emit({ event: 'pod-step', wave, pod: key, step: step.kind, message: step.message });
                  }
                },
              },
            );
          } catch (err) {
            // Let the other flows reach a resumable point, then fail the run with this error.
            this.fatal ??= err;
            return;
          } finally {
            this.inFlight.delete(key);
            this.wake();
          }
          const result = resultOf(outcome, direction);
          this.emit({
            event: 'pod-end',
            wave,
            pod: key,
            result,
            ...('reason' in outcome ? { reason: outcome.reason } : {}),
            message: outcome.message,
            durationMs: this.now() - began,
          });
          summary.durationMs = this.now() - first;
          this.count(outcome, result, key, summary, direction);
        }),
      ),
    );
    if (this.fatal !== undefined) throw this.fatal;
  }

  private count(outcome: PodOutcome, result: PodResult, key: string, summary: WaveSummary, direction: 'upgrade' | 'rollback'): void {
    if (result === 'upgraded' || result === 'rolled-back') {
      summary.upgraded++;
      if (direction === 'upgrade') this.tally.upgraded++;
    } else if (result === 'vanished') {
      summary.vanished++;
    } else if (result === 'failed' || result === 'refused' || result === 'foreign') {
      summary.failed++;
      if (direction === 'upgrade') {
        const reason = 'reason' in outcome ? outcome.reason : result;
        this.tally.failed.push({ pod: key, reason, message: outcome.message });
        const maxFailed = this.maxFailed;
        if (!this.halted && exceedsMaxFailed(this.tally.failed.length, maxFailed)) {
          const list = this.tally.failed.map((f) => `${f.pod} (${f.reason})`).join(', ');
          this.halt('failures', `${this.tally.failed.length} pod${this.tally.failed.length === 1 ? '' : 's'} failed, more than maxFailed ${maxFailed}: ${list}`);
        }
      }
    }
  }

  /** Stops the rollout: nothing new starts, pods in flight finish. */
  private halt(reason: 'failures' | 'gate', message: string, wave = this.currentWave): void {
    if (this.halted) return;
    this.halted = message;
    this.emit({ event: 'halt', wave, reason, message });
    this.wake();
  }

  // ---- the rollout ---------------------------------------------------------------------------

  private select(): FleetSelection {
    return selectFleet(this.plan, this.deps.view.list(), this.deps.zones);
  }

  async upgrade(): Promise<RunResult> {
    const selection = this.select();
    const untrack = this.track(selection);
    this.maxFailed = selection.maxFailed;
    const { partition } = selection;
    try {
      this.emit({
        event: 'rollout-start',
        revision: this.plan.revision,
        direction: 'upgrade',
        selected: selection.selected.length,
        alreadyDone: selection.done.length,
        waves: partition.waveCount,
        deferred: partition.deferred.length,
        budget: selection.budget,
        concurrency: this.plan.strategy.concurrency,
        resumed: selection.resumed.length > 0 || partition.satisfied.length > 0,
      });

      const resumed = new Set(selection.resumed.map((p) => `${p.namespace}/${p.name}`));
      let previous = partition.satisfied.length > 0 ? Math.max(...partition.satisfied) : 0;
      for (const wave of partition.waves) {
        // Resuming after waves an earlier run completed: their gates must still have passed.
        if (previous > 0 && previous === wave.index - 1 && !this.summaries.some((s) => s.wave === previous) && !this.deps.gatesPassed?.(previous)) {
          const r = await this.gates(previous, partition.waveCount);
          if (r) return r;
        }
        const summary: WaveSummary = { wave: wave.index, pods: wave.pods.length, upgraded: 0, failed: 0, vanished: 0 };
        const startWave = () => {
          this.currentWave = wave.index;
          this.emit({ event: 'wave-start', wave: wave.index, waves: partition.waveCount, pods: wave.pods.length, target: wave.target });
          this.summaries.push(summary);
        };
        let pods = wave.pods;
        // Pods an earlier run left mid-flow (drained, maybe patched) are finished even outside
        // the window: none may stay drained until it opens.
        const leftMidFlow = pods.filter((p) => resumed.has(`${p.namespace}/${p.name}`));
        if (leftMidFlow.length > 0 && this.plan.window && !windowState(this.plan.window, this.now()).open) {
          startWave();
          await this.runPods(leftMidFlow, wave.index, 'upgrade', summary);
          pods = pods.filter((p) => !leftMidFlow.includes(p));
        }
        const waited = await this.waitForWindow(wave.index);
        if (waited) return waited;
        if (this.stopping) break;

        if (pods === wave.pods) startWave();
        await this.runPods(pods, wave.index, 'upgrade', summary);
        this.emit({ event: 'wave-end', wave: wave.index, summary: { ...summary } });
        previous = wave.index;
        if (this.stopping) break;
        const r = await this.gates(wave.index, partition.waveCount);
        if (r) return r;
      }
      return await this.finish(partition.deferred.length);
    } finally {
      untrack();
    }
  }

  /** Runs the gates due after `wave`; returns a result when the rollout must end there. */
  private async gates(wave: number, waveCount: number): Promise<RunResult | undefined> {
    for (const gate of this.plan.gates) {
      if (!gateAppliesAfterWave(gate, wave, waveCount)) continue;
      this.emit({ event: 'gate-start', wave, gate: gate.name });
      const approvals = this.deps.approvals;
      const run: GateRun = await runGate(gate, {
        plan: this.plan.name,
        revision: this.plan.revision,
        wave,
        phase: 'Progressing',
        signal: this.deps.stop,
        ...(this.deps.gateMetrics ? { metrics: this.deps.gateMetrics } : {}),
        sleep: this.deps.sleep,
        now: this.now,
        ...this.deps.gateIO,
        onPause: (msLeft) => this.emit({ event: 'gate-pause', wave, gate: gate.name, msLeft }),
        pauseTickMs: 5000,
        ...(approvals
          ? { isApproved: () => approvals.isApproved(wave), waitForApproval: (signal?: AbortSignal) => approvals.waitForApproval(wave, signal) }
          : {}),
        onAwaitingApproval: () => this.emit({ event: 'gate-approval-wait', wave, gate: gate.name }),
        onMeasurement: (_step, m, index, count) =>
          this.emit({ event: 'gate-measurement', wave, gate: gate.name, index, count, value: m.value, phase: m.phase, message: m.message }),
      });
      this.emit({ event: 'gate-end', wave, gate: gate.name, result: run.result, message: run.message });
      if (run.result === 'interrupted') return this.finish(0);
      if (run.result !== 'passed') {
        this.halt('gate', run.message, wave);
        return this.finish(0);
      }
    }
    return undefined;
  }

  /** Waits for the plan's window to open; returns a result if stopped while waiting. */
  private async waitForWindow(wave: number): Promise<RunResult | undefined> {
    const window = this.plan.window;
    if (!window) return undefined;
    for (;;) {
      const state = windowState(window, this.now());
      if (state.open) return undefined;
      if (state.opensAtMs === undefined) {
        this.halt('gate', 'the maintenance window never opens', wave);
        return this.finish(0);
      }
      const msLeft = state.opensAtMs - this.now();
      this.emit({ event: 'window-wait', wave, msLeft, opensAt: new Date(state.opensAtMs).toISOString() });
      // Wake at least every minute so the time left stays current in status output.
      if (!(await this.deps.sleep(Math.min(msLeft, 60_000), this.deps.stop))) return this.finish(0);
    }
  }

  /** Ends the run: rollback when halted, and the phase and exit code. */
  private async finish(deferred: number): Promise<RunResult> {
    let phase: RolloutPhase;
    let exitCode: number;
    let message: string;
    if (this.halted) {
      const rollback = await this.rollbackAfterHalt();
      const total = rollback?.summaries.reduce((n, w) => n + w.pods, 0) ?? 0;
      const back = rollback?.summaries.reduce((n, w) => n + w.upgraded, 0) ?? 0;
      phase = rollback?.scope === 'all' && back === total ? 'RolledBack' : 'Halted';
      exitCode = ExitCode.HALTED;
      const what = rollback?.scope === 'all' ? 'every upgraded pod' : 'the failed pods';
      message = `halted: ${this.halted}${rollback ? (back === total ? `; rolled back ${what}` : `; rolled back ${back} of ${total} pods (${what})`) : ''}`;
    } else if (this.deps.stop.aborted || this.deps.abort?.aborted) {
      phase = 'Paused';
      exitCode = ExitCode.INTERRUPTED;
      message = 'interrupted: in-flight pods finished; run the same plan again to resume';
    } else if (deferred > 0) {
      phase = 'Partial';
      exitCode = ExitCode.OK;
      message = `partial rollout complete: ${this.tally.upgraded} upgraded, ${deferred} left for a later plan`;
    } else {
      phase = 'Completed';
      exitCode = ExitCode.OK;
      const ran = this.summaries.reduce((n, s) => n + s.pods, 0);
      message =
        ran === 0
          ? 'nothing to do: every selected pod already runs the target images'
          : `completed: ${this.tally.upgraded} pods upgraded${this.tally.failed.length ? `, ${this.tally.failed.length} failed (within maxFailed)` : ''}`;
    }
    this.emit({ event: 'rollout-end', phase, exitCode, message, waves: this.summaries.map((s) => ({ ...s })), durationMs: this.now() - this.startedAt });
    return { phase, exitCode, message, waves: this.summaries };
  }

  /** Carries out `failurePolicy.rollback` after a halt; undefined when there was nothing to do. */
  private async rollbackAfterHalt(): Promise<{ scope: 'failed' | 'all'; summaries: WaveSummary[] } | undefined> {
    const scope = this.plan.failurePolicy.rollback;
    if (scope === 'none' || this.deps.abort?.aborted || this.fatal !== undefined) return undefined;
    const failed = new Set(this.tally.failed.map((f) => f.pod));
    const upgraded = this.upgradedByThisRevision();
    const pods = upgraded.filter((p) => scope === 'all' || failed.has(`${p.namespace}/${p.name}`));
    // Failed before their image patch (a drain that never ended): no state on the pod, but their
    // gate is closed; the rollback flow reopens it.
    const known = new Set(upgraded.map((p) => `${p.namespace}/${p.name}`));
    for (const key of failed) {
      if (known.has(key)) continue;
      const [namespace, name] = key.split('/') as [string, string];
      const pod = this.deps.view.get(namespace, name);
      if (pod) pods.push({ namespace, name, uid: pod.metadata?.uid ?? '', pod, wave: this.currentWave });
    }
    if (pods.length === 0) return undefined;
    this.emit({ event: 'rollback-start', pods: pods.length, scope });
    return { scope, summaries: await this.rollbackPods(pods, { evenIfStopped: true }) };
  }

  /**
   * Pods to revert, last wave first: those carrying this revision's upgrade state, and those a
   * killed rollback left with the gate still closed. Pods whose rollback reopened the gate are
   * done and left alone (reverting them again would count them twice).
   */
  private upgradedByThisRevision(): (SelectedPod & { wave: number })[] {
    const out: (SelectedPod & { wave: number })[] = [];
    for (const pod of this.deps.view.list()) {
      const st = readState(pod);
      const md = pod.metadata;
      if (st.kind !== 'ok' || !md?.name || !md.namespace) continue;
      if (st.state.plan !== this.plan.name || st.state.revision !== this.plan.revision) continue;
      if (st.state.direction === 'rollback' && conditionStatus(pod, this.plan.readinessGate.conditionType) === 'True') continue;
      if (!this.plan.target.namespaces.includes(md.namespace)) continue;
      out.push({ namespace: md.namespace, name: md.name, uid: md.uid ?? '', pod, wave: st.state.wave });
    }
    return out.sort((a, b) => b.wave - a.wave || `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  }

  /**
   * Rolls pods back wave by wave (last first), under the same budget and concurrency. After a
   * halt (`evenIfStopped`) it runs to its end whatever the first signal said: failed pods must
   * not stay drained. `kwave rollback` itself stops on the first signal like a run.
   */
  private async rollbackPods(pods: (SelectedPod & { wave: number })[], options: { evenIfStopped: boolean }): Promise<WaveSummary[]> {
    const byWave = new Map<number, SelectedPod[]>();
    for (const p of pods) byWave.set(p.wave, [...(byWave.get(p.wave) ?? []), p]);
    const out: WaveSummary[] = [];
    this.rollingBack = options.evenIfStopped;
    this.rollbackSet = new Set(pods.map((p) => `${p.namespace}/${p.name}`));
    try {
      for (const [wave, group] of byWave) {
        if (this.stopping) break;
        const summary: WaveSummary = { wave, pods: group.length, upgraded: 0, failed: 0, vanished: 0 };
        await this.runPods(group, wave, 'rollback', summary);
        out.push(summary);
      }
    } finally {
      this.rollingBack = false;
      this.rollbackSet = new Set();
    }
    return out;
  }

  async rollbackAll(): Promise<RunResult> {
    const selection = this.select();
    const untrack = this.track(selection);
    try {
      const pods = this.upgradedByThisRevision();
      this.emit({
        event: 'rollout-start',
        revision: this.plan.revision,
        direction: 'rollback',
        selected: selection.selected.length,
        alreadyDone: 0,
        waves: new Set(pods.map((p) => p.wave)).size,
        deferred: 0,
        budget: selection.budget,
        concurrency: this.plan.strategy.concurrency,
        resumed: false,
      });
      this.emit({ event: 'rollback-start', pods: pods.length, scope: 'all' });
      const summaries = await this.rollbackPods(pods, { evenIfStopped: false });
      this.summaries.push(...summaries);
      const failed = summaries.reduce((n, s) => n + s.failed, 0);
      const done = summaries.reduce((n, s) => n + s.upgraded, 0);
      const interrupted = (this.deps.stop.aborted || this.deps.abort?.aborted) ?? false;
      const phase: RolloutPhase = interrupted ? 'Paused' : failed > 0 ? 'Halted' : 'RolledBack';
      const exitCode = interrupted ? ExitCode.INTERRUPTED : failed > 0 ? ExitCode.HALTED : ExitCode.OK;
      const message = interrupted
        ? `interrupted: ${done} pods rolled back; run kwave rollback again to finish`
        : failed > 0
          ? `rollback: ${done} pods rolled back, ${failed} failed`
          : `rolled back ${done} pods`;
      this.emit({ event: 'rollout-end', phase, exitCode, message, waves: summaries, durationMs: this.now() - this.startedAt });
      return { phase, exitCode, message, waves: summaries };
    } finally {
      untrack();
    }
  }
}

function resultOf(outcome: PodOutcome, direction: 'upgrade' | 'rollback'): PodResult {
  switch (outcome.kind) {
    case 'done':
      return direction === 'upgrade' ? 'upgraded' : 'rolled-back';
    case 'skipped':
      return 'skipped';
    default:
      return outcome.kind;
  }
}
