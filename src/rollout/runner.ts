// Carries a plan across the fleet: waves in order; in each, at most `concurrency` pods in flight
// (p-limit) and a pod starts only while the unavailability budget allows; gates between waves;
// halting and in-place rollback on failures. It decides nothing per pod (decide.ts does), checks
// no gate itself (gates/ plugs in as `checkGate`) and prints nothing (it emits events). Resuming
// needs no state of its own: the selection is made again from the cluster, and pods left
// mid-flow carry their state in their annotation.
import pLimit from 'p-limit';
import type { Plan } from '../plan/types.js';
import { runPodFlow, type PodOutcome } from '../inplace/executor.js';
import { podKey } from '../inplace/podView.js';
import type { Direction } from '../inplace/state.js';
import { canStart, exceedsMaxFailed, heldOnlyByFailures, startBlocker } from './budget.js';
import { BudgetTracker } from './budgetTracker.js';
import type { EventSink, NodeWait, RolloutEventBody, WaveSummary } from './events.js';
import { nodeHealth, nodeLostMessage, nodeWaitMessage, type NodeHealth } from './nodeHealth.js';
import { gateAppliesAfterWave, type GateVerdict } from './gateCheck.js';
import { outcomeOf, type RollbackDone, type RunOutcome } from './outcome.js';
import type { RunnerDeps, RunResult } from './runnerDeps.js';
import { isFailure, resultOf, type PodResult } from './podEnd.js';
import { rollbackTargets, upgradedByRevision, type RollbackTarget } from './rollbackTargets.js';
import { selectFleet, type FleetSelection, type SelectedPod } from './select.js';
import { windowState } from './window.js';

export type { Approvals, FleetView, NodeView, RunnerDeps, RunResult } from './runnerDeps.js';

/** A node that cannot act, and why. */
type NodeDown = { node: string; health: Extract<NodeHealth, { canAct: false }> };

interface Failure {
  pod: string;
  reason: string;
  message: string;
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
  private budget!: BudgetTracker;
  /** Why the rollout halted, once it has. */
  private haltMessage: string | undefined;
  /** Pods this run upgraded (rollbacks not counted). */
  private upgraded = 0;
  /** Pods whose upgrade failed, in order. */
  private readonly failures: Failure[] = [];
  private readonly summaries: WaveSummary[] = [];
  private currentWave = 0;
  private maxFailed = 0;
  /** A rollback after a halt runs to its end whatever stopped the rollout; only a hard abort or a fatal error stops it. */
  private rollingBackAfterHalt = false;
  /** An unexpected error of one pod's flow (403, a long outage): nothing more starts, then it is rethrown. */
  private fatal: unknown;
  /** Pods waiting for their node to act again, each with the promise of its wait (and its flow, once the node is back). */
  private readonly parked = new Map<string, Promise<void>>();
  /** Pods the run leaves to the next one because their node could not act. */
  private readonly leftForNodes = new Map<string, NodeWait>();
  /** Set when everything else is done: pods still waiting for their node stop waiting. */
  private ending = false;
  /** Pods in flight: their node, the step they are at, and the switch that ends their flow when the node stops acting. */
  private readonly flows = new Map<string, { node: string | undefined; step: string; nodeLost: AbortController }>();
  /** Waves' first pod starts, for their durations. */
  private readonly firstStart = new Map<WaveSummary, number>();
  private readonly parkedLimit: ReturnType<typeof pLimit>;

  constructor(
    private readonly plan: Plan,
    private readonly deps: RunnerDeps,
  ) {
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
    this.parkedLimit = pLimit(plan.strategy.concurrency);
    // A stop wakes every pod waiting for the budget, so they can give up, and says what the run still waits for.
    deps.stop.addEventListener('abort', () => this.onStop(), { once: true });
    deps.abort?.addEventListener('abort', () => this.budget?.wake(), { once: true });
  }

  private emit(body: RolloutEventBody): void {
    this.deps.sink({ time: new Date(this.now()).toISOString(), plan: this.plan.name, ...body } as Parameters<EventSink>[0]);
  }

  private get interrupted(): boolean {
    return this.deps.stop.aborted || (this.deps.abort?.aborted ?? false);
  }

  /** Whether nothing new may start: a hard abort or a fatal error always; a stop or a halt unless rolling back after a halt. */
  private get stopping(): boolean {
    if (this.deps.abort?.aborted || this.fatal !== undefined) return true;
    return !this.rollingBackAfterHalt && (this.deps.stop.aborted || this.haltMessage !== undefined);
  }

  /** Selects the fleet and starts following its readiness; call the result when done. */
  private begin(): { selection: FleetSelection; untrack: () => void } {
    const selection = selectFleet(this.plan, this.deps.view.list(), this.deps.zones);
    this.budget = new BudgetTracker(selection.selected, selection.budget, this.plan.strategy.concurrency, this.deps.onUnavailable);
    this.maxFailed = selection.maxFailed;
    const unwatchPods = this.budget.follow((listener) => this.deps.view.onChange(listener));
    const unwatchNodes = this.deps.nodes?.onChange((name) => this.onNodeChange(name));
    return {
      selection,
      untrack: () => {
        unwatchPods();
        unwatchNodes?.();
      },
    };
  }

  // ---- the upgrade, a script of waves -------------------------------------------------------

  async upgrade(): Promise<RunResult> {
    const { selection, untrack } = this.begin();
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

      const resumed = new Set(selection.resumed.map(podKey));
      let previous = partition.satisfied.length > 0 ? Math.max(...partition.satisfied) : 0;
      for (const wave of partition.waves) {
        // Resuming after waves an earlier run completed: their gates must still have passed.
        if (previous > 0 && previous === wave.index - 1 && !this.summaries.some((s) => s.wave === previous) && !this.deps.gatesPassed?.(previous)) {
          if (!(await this.gates(previous, partition.waveCount))) return await this.finish(0);
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
        const leftMidFlow = pods.filter((p) => resumed.has(podKey(p)));
        if (leftMidFlow.length > 0 && this.plan.window && !windowState(this.plan.window, this.now()).open) {
          startWave();
          await this.runPods(leftMidFlow, wave.index, 'upgrade', summary);
          pods = pods.filter((p) => !leftMidFlow.includes(p));
        }
        if (!(await this.waitForWindow(wave.index))) return await this.finish(0);
        if (this.stopping) break;

        if (pods === wave.pods) startWave();
        await this.runPods(pods, wave.index, 'upgrade', summary);
        this.emit({ event: 'wave-end', wave: wave.index, summary: { ...summary } });
        previous = wave.index;
        if (this.stopping) break;
        if (!(await this.gates(wave.index, partition.waveCount))) return await this.finish(0);
      }
      return await this.finish(partition.deferred.length);
    } finally {
      untrack();
    }
  }

  /** Checks the gates due after `wave`; false when the rollout must end there (halted or interrupted). */
  private async gates(wave: number, waveCount: number): Promise<boolean> {
    for (const gate of this.plan.gates) {
      if (!gateAppliesAfterWave(gate, wave, waveCount)) continue;
      this.emit({ event: 'gate-start', wave, gate: gate.name });
      const verdict = await this.checkGate(gate, wave);
      this.emit({ event: 'gate-end', wave, gate: gate.name, result: verdict.result, message: verdict.message });
      if (verdict.result === 'interrupted') return false;
      if (verdict.result !== 'passed') {
        this.halt('gate', verdict.message, wave);
        return false;
      }
    }
    return true;
  }

  private async checkGate(gate: Plan['gates'][number], wave: number): Promise<GateVerdict> {
    if (!this.deps.checkGate) return { result: 'failed', message: `${gate.name}: this run has no way to check gates` };
    const approvals = this.deps.approvals;
    return this.deps.checkGate(gate, {
      wave,
      signal: this.deps.stop,
      onPause: (msLeft) => this.emit({ event: 'gate-pause', wave, gate: gate.name, msLeft }),
      onAwaitingApproval: () => this.emit({ event: 'gate-approval-wait', wave, gate: gate.name }),
      onMeasurement: (m, index, count) => this.emit({ event: 'gate-measurement', wave, gate: gate.name, index, count, value: m.value, phase: m.phase, message: m.message }),
      ...(approvals ? { isApproved: () => approvals.isApproved(wave), waitForApproval: (signal?: AbortSignal) => approvals.waitForApproval(wave, signal) } : {}),
    });
  }

  /** Waits for the plan's window to open; false when the rollout must end instead (stopped, or a window that never opens). */
  private async waitForWindow(wave: number): Promise<boolean> {
    const window = this.plan.window;
    if (!window) return true;
    for (;;) {
      const state = windowState(window, this.now());
      if (state.open) return true;
      if (state.opensAtMs === undefined) {
        this.halt('gate', 'the maintenance window never opens', wave);
        return false;
      }
      const msLeft = state.opensAtMs - this.now();
      this.emit({ event: 'window-wait', wave, msLeft, opensAt: new Date(state.opensAtMs).toISOString() });
      // Wake at least every minute so the time left stays current in status output.
      if (!(await this.deps.sleep(Math.min(msLeft, 60_000), this.deps.stop))) return false;
    }
  }

  /** Ends the upgrade: the rollback a halt calls for, then the outcome. */
  private async finish(deferred: number): Promise<RunResult> {
    await this.settleParked();
    const rollback = this.haltMessage !== undefined ? await this.rollbackAfterHalt() : undefined;
    const outcome = outcomeOf({
      leftForNodes: [...this.leftForNodes.values()],
      direction: 'upgrade',
      ...(this.haltMessage !== undefined ? { haltMessage: this.haltMessage } : {}),
      ...(rollback ? { rollback } : {}),
      interrupted: this.interrupted,
      deferred,
      upgraded: this.upgraded,
      failed: this.failures.length,
      ran: this.summaries.reduce((n, s) => n + s.pods, 0),
    });
    return this.end(outcome, this.summaries);
  }

  private end(outcome: RunOutcome, waves: WaveSummary[]): RunResult {
    const waitingForNodes = [...this.leftForNodes.values()];
    this.emit({
      event: 'rollout-end',
      ...outcome,
      waves: waves.map((s) => ({ ...s })),
      durationMs: this.now() - this.startedAt,
      ...(waitingForNodes.length > 0 ? { waitingForNodes } : {}),
    });
    return { ...outcome, waves };
  }

  // ---- failures and halting ------------------------------------------------------------------

  /** Stops the rollout: nothing new starts, pods in flight finish. */
  private halt(reason: 'failures' | 'gate', message: string, wave = this.currentWave): void {
    if (this.haltMessage !== undefined) return;
    this.haltMessage = message;
    this.emit({ event: 'halt', wave, reason, message });
    this.budget.wake();
  }

  /** Halts once more pods failed than `maxFailed` allows. */
  private haltIfTooManyFailed(): void {
    if (this.haltMessage !== undefined || !exceedsMaxFailed(this.failures.length, this.maxFailed)) return;
    const n = this.failures.length;
    const list = this.failures.map((f) => `${f.pod} (${f.reason})`).join(', ');
    this.halt('failures', `${n} pod${n === 1 ? '' : 's'} failed, more than maxFailed ${this.maxFailed}: ${list}`);
  }

  /** Carries out `failurePolicy.rollback` after a halt; undefined when there was nothing to do. */
  private async rollbackAfterHalt(): Promise<RollbackDone | undefined> {
    const scope = this.plan.failurePolicy.rollback;
    if (scope === 'none' || this.deps.abort?.aborted || this.fatal !== undefined) return undefined;
    const failed = new Set(this.failures.map((f) => f.pod));
    const pods = rollbackTargets(this.deps.view.list(), this.plan, scope, failed, this.currentWave);
    if (pods.length === 0) return undefined;
    this.emit({ event: 'rollback-start', pods: pods.length, scope });
    const summaries = await this.rollbackPods(pods, { evenIfStopped: true });
    return { scope, pods: summaries.reduce((n, w) => n + w.pods, 0), reverted: summaries.reduce((n, w) => n + w.upgraded, 0) };
  }

  // ---- kwave rollback ------------------------------------------------------------------------

  async rollbackAll(): Promise<RunResult> {
    const { selection, untrack } = this.begin();
    try {
      const pods = upgradedByRevision(this.deps.view.list(), this.plan);
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
      const outcome = outcomeOf({
        direction: 'rollback',
        leftForNodes: [...this.leftForNodes.values()],
        interrupted: this.interrupted,
        reverted: summaries.reduce((n, s) => n + s.upgraded, 0),
        failed: summaries.reduce((n, s) => n + s.failed, 0),
      });
      return this.end(outcome, summaries);
    } finally {
      untrack();
    }
  }

  /**
   * Rolls pods back wave by wave (last first), under the same budget and concurrency. After a
   * halt (`evenIfStopped`) it runs to its end whatever the first signal said: failed pods must
   * not stay drained. `kwave rollback` itself stops on the first signal like a run.
   */
  private async rollbackPods(pods: readonly RollbackTarget[], options: { evenIfStopped: boolean }): Promise<WaveSummary[]> {
    const byWave = new Map<number, SelectedPod[]>();
    for (const p of pods) byWave.set(p.wave, [...(byWave.get(p.wave) ?? []), p]);
    const out: WaveSummary[] = [];
    this.rollingBackAfterHalt = options.evenIfStopped;
    this.budget.exemptWhileRollingBack(pods.map(podKey));
    try {
      for (const [wave, group] of byWave) {
        if (this.stopping) break;
        const summary: WaveSummary = { wave, pods: group.length, upgraded: 0, failed: 0, vanished: 0 };
        await this.runPods(group, wave, 'rollback', summary);
        out.push(summary);
      }
    } finally {
      this.rollingBackAfterHalt = false;
      this.budget.exemptWhileRollingBack([]);
    }
    return out;
  }

  // ---- nodes that cannot act -----------------------------------------------------------------

  private nodeOf(p: SelectedPod): string | undefined {
    return this.deps.view.get(p.namespace, p.name)?.spec?.nodeName ?? p.node;
  }

  /** The pod's node and why it cannot act; undefined when it can (or kwave has no news of it). */
  private nodeDown(p: SelectedPod): NodeDown | undefined {
    const node = this.nodeOf(p);
    if (!node || !this.deps.nodes) return undefined;
    const health = nodeHealth(this.deps.nodes.get(node));
    return health.canAct ? undefined : { node, health };
  }

  /** A node changed: pods in flight there stop where they stand if it can no longer act; waiters look again. */
  private onNodeChange(name: string): void {
    if (!nodeHealth(this.deps.nodes?.get(name)).canAct) for (const f of this.flows.values()) if (f.node === name) f.nodeLost.abort();
    this.budget?.wake();
  }

  /** What a pod waiting for `down` is shown with, and listed with if the run leaves it. */
  private nodeWaitOf(key: string, down: NodeDown, direction: Direction): NodeWait {
    const since = down.health.sinceMs === undefined ? undefined : new Date(down.health.sinceMs).toISOString();
    const message = nodeWaitMessage(down.node, down.health, this.now());
    return { pod: key, node: down.node, ...(since ? { since } : {}), message: direction === 'rollback' ? `rollback pending: ${message}` : message };
  }

  /**
   * First stop signal: say what the run still waits for, and leave pods whose node cannot act
   * resumable at once rather than after their podTimeout.
   */
  private onStop(): void {
    const waitingFor: string[] = [];
    const leaving: string[] = [];
    for (const [key, f] of this.flows) {
      const health = f.node ? nodeHealth(this.deps.nodes?.get(f.node)) : undefined;
      if (f.node && health && !health.canAct) {
        f.nodeLost.abort();
        leaving.push(`${key} (${nodeWaitMessage(f.node, health, this.now())})`);
      } else waitingFor.push(`${key} (${f.step})`);
    }
    for (const key of this.parked.keys()) {
      if (this.flows.has(key)) continue;
      const [namespace, name] = key.split('/') as [string, string];
      const down = this.nodeDown({ namespace, name, uid: '', pod: {} });
      leaving.push(down ? `${key} (${nodeWaitMessage(down.node, down.health, this.now())})` : key);
    }
    if (waitingFor.length > 0 || leaving.length > 0) {
      const parts = [
        waitingFor.length > 0 ? `waiting for ${waitingFor.length} pod${waitingFor.length === 1 ? '' : 's'} in flight to finish: ${waitingFor.join(', ')}` : 'no pod in flight to wait for',
        ...(leaving.length > 0 ? [`not waiting for ${leaving.join(', ')}: left resumable, their node cannot act`] : []),
      ];
      this.emit({ event: 'interrupt', message: parts.join('; ') });
    }
    this.budget?.wake();
  }

  /**
   * Leaves `p` out until its node can act again, then runs it (outside the wave's concurrency
   * limiter, so waiting pods hold no slot of it). A rollback is not attempted while the node is
   * down (it would time out the same way): it is left pending for the next run.
   */
  private park(p: SelectedPod, wave: number, direction: Direction, summary: WaveSummary, down: NodeDown): void {
    const key = podKey(p);
    const wait = this.nodeWaitOf(key, down, direction);
    this.emit({ event: 'pod-waiting', wave, pod: key, node: wait.node, ...(wait.since ? { since: wait.since } : {}), direction, message: wait.message });
    if (direction === 'rollback' || this.parked.has(key)) {
      this.leftForNodes.set(key, wait);
      return;
    }
    const waiting = (async () => {
      for (;;) {
        if (this.stopping || this.ending) {
          const still = this.nodeDown(p);
          this.leftForNodes.set(key, still ? this.nodeWaitOf(key, still, direction) : wait);
          return;
        }
        if (!this.nodeDown(p)) break;
        await this.budget.nextChange();
      }
      const again = await this.parkedLimit(() => this.runOne(p, wave, direction, summary));
      if (again) {
        this.parked.delete(key);
        this.park(p, wave, direction, summary, again);
      }
    })();
    this.parked.set(key, waiting);
  }

  /** Everything else is done: pods still waiting for their node stop waiting (their flows, if running, finish). */
  private async settleParked(): Promise<void> {
    this.ending = true;
    this.budget.wake();
    while (this.parked.size > 0) {
      const all = [...this.parked.values()];
      await Promise.all(all);
      for (const [k, v] of this.parked) if (all.includes(v)) this.parked.delete(k);
    }
  }

  /**
   * A flow ended because its node stopped acting (`lost`), or timed out while the node could not
   * act: not the image's failure but `NodeNotReady`, saying since when. The pod stays as it
   * stands (drained, maybe patched) for the next run, which resumes it from its state.
   */
  private nodeLostOutcome(p: SelectedPod, outcome: PodOutcome, lost: boolean): PodOutcome {
    const timedOut = outcome.kind === 'failed' && (outcome.reason === 'Timeout' || outcome.reason === 'DrainTimeout');
    if (!lost && !timedOut) return outcome;
    const down = this.nodeDown(p);
    if (!down) return outcome;
    const key = podKey(p);
    this.leftForNodes.set(key, this.nodeWaitOf(key, down, 'upgrade'));
    const message = `${nodeLostMessage(down.node, down.health)}; left as it stands for the next run`;
    return { kind: 'failed', reason: 'NodeNotReady', message, ...('state' in outcome && outcome.state ? { state: outcome.state } : {}), writes: outcome.writes };
  }

  // ---- pods ----------------------------------------------------------------------------------

  /**
   * Waits until one more pod may start and counts `key` in flight; false when the rollout stops
   * first. The slot is taken in the same turn as the check: waiters wake together, and a slot
   * taken one await later would let each of them pass the same check (budget overshoot).
   * A candidate already not Ready (left drained by a killed run, say) is not counted twice: its
   * start adds no unavailable pod, and counting it would let drained pods block their own resume.
   */
  private async acquire(wave: number, key: string, p: SelectedPod): Promise<boolean | 'node-down'> {
    let reported = false;
    for (;;) {
      if (this.stopping) return false;
      if (this.nodeDown(p)) return 'node-down';
      const req = this.budget.request(key);
      if (canStart(req)) {
        this.budget.take(key);
        return true;
      }
      if (startBlocker(req) === 'budget') {
        const holders = this.budget.holders(key);
        if (!this.rollingBackAfterHalt && heldOnlyByFailures(holders, req.inFlight, new Set(this.failures.map((f) => f.pod)))) {
          this.halt('failures', `the unavailability budget of ${req.budget} is held by pods that failed (${holders.join(', ')}): no other pod can start`);
          return false;
        }
        if (!reported) {
          reported = true;
          this.emit({ event: 'budget-wait', wave, unavailable: req.unreadyNotInFlight + req.inFlight, budget: req.budget, holders: holders.slice(0, 5) });
        }
      }
      await this.budget.nextChange();
    }
  }

  /** Runs `pods` through their flows under the concurrency limit and the budget. */
  /**
   * Runs `pods` through their flows under the concurrency limit and the budget. A pod whose node
   * cannot act leaves the limiter and waits apart (`park`), so it holds none of its slots.
   */
  private async runPods(pods: readonly SelectedPod[], wave: number, direction: Direction, summary: WaveSummary): Promise<void> {
    const limit = pLimit(this.plan.strategy.concurrency);
    await Promise.all(
      pods.map((p) =>
        limit(async () => {
          const down = await this.runOne(p, wave, direction, summary);
          if (down) this.park(p, wave, direction, summary, down);
        }),
      ),
    );
    if (this.fatal !== undefined) throw this.fatal;
  }

  /** One pod, from the budget to its end; its node's state instead when the node cannot act before it starts. */
  private async runOne(p: SelectedPod, wave: number, direction: Direction, summary: WaveSummary): Promise<NodeDown | undefined> {
    const key = podKey(p);
    const down = this.nodeDown(p);
    if (down) return down;
    const acquired = await this.acquire(wave, key, p);
    if (acquired === 'node-down') return this.nodeDown(p);
    if (!acquired) return undefined;
    this.budget.wake();
    const began = this.now();
    if (!this.firstStart.has(summary)) this.firstStart.set(summary, began);
    const first = this.firstStart.get(summary) ?? began;
    this.emit({ event: 'pod-start', wave, pod: key });
    const nodeLost = new AbortController();
    this.flows.set(key, { node: this.nodeOf(p), step: 'started', nodeLost });
    let outcome: PodOutcome;
    try {
      outcome = await this.runFlow(p, wave, direction, key, nodeLost.signal);
    } catch (err) {
      // Let the other flows reach a resumable point, then fail the run with this error.
      this.fatal ??= err;
      return undefined;
    } finally {
      this.flows.delete(key);
      this.budget.release(key);
    }
    outcome = this.nodeLostOutcome(p, outcome, nodeLost.signal.aborted && !this.deps.abort?.aborted);
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
    this.tally(outcome, result, key, summary, direction);
    if (direction === 'upgrade') this.haltIfTooManyFailed();
    return undefined;
  }

  private runFlow(p: SelectedPod, wave: number, direction: Direction, key: string, nodeLost: AbortSignal): Promise<PodOutcome> {
    const s = this.plan.strategy;
    return runPodFlow(
      { namespace: p.namespace, name: p.name, uid: p.uid },
      {
        plan: this.plan.name,
        revision: this.plan.revision,
        wave,
        direction,
        containers: this.plan.update.containers,
        gate: this.plan.readinessGate,
        drainMs: s.drainMs,
        podTimeoutMs: s.podTimeoutMs,
        minReadyMs: s.minReadyMs,
      },
      {
        writer: this.deps.writer,
        reader: this.deps.view,
        now: this.now,
        signal: this.deps.abort ? AbortSignal.any([this.deps.abort, nodeLost]) : nodeLost,
        onStep: (step) => {
          const flow = this.flows.get(key);
          if (flow) flow.step = step.kind;
          if (step.kind.startsWith('wait-') || step.kind === 'patch' || step.kind.endsWith('-gate')) {
            this.emit({ event: 'pod-step', wave, pod: key, step: step.kind, message: step.message });
          }
        },
      },
    );
  }

  /** Counts a finished pod into its wave's summary and, for upgrades, into the run's totals. */
  private tally(outcome: PodOutcome, result: PodResult, key: string, summary: WaveSummary, direction: Direction): void {
    if (result === 'upgraded' || result === 'rolled-back') {
      summary.upgraded++;
      if (direction === 'upgrade') this.upgraded++;
    } else if (result === 'vanished') {
      summary.vanished++;
    } else if (isFailure(result)) {
      summary.failed++;
      // A node that stopped acting is not the image's failure, unless the plan says to count it.
      const nodeFailure = 'reason' in outcome && outcome.reason === 'NodeNotReady';
      if (direction === 'upgrade' && (!nodeFailure || this.plan.failurePolicy.countNodeFailures)) this.failures.push({ pod: key, reason: 'reason' in outcome ? outcome.reason : result, message: outcome.message });
    }
  }
}
