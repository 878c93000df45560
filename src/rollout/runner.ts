// Carries a plan across the fleet: waves in order; in each, at most `concurrency` pods in flight
// (SlotLimit) and a pod starts only while the unavailability budget allows; gates between waves;
// halting and in-place rollback on failures. It decides nothing per pod (decide.ts does), checks
// no gate itself (gates/ plugs in as `checkGate`) and prints nothing (it emits events). Resuming
// needs no state of its own: the selection is made again from the cluster, and pods left
// mid-flow carry their state in their annotation.
import type { Plan } from '../plan/types.js';
import { podKey } from '../inplace/podView.js';
import { readState } from '../inplace/state.js';
import { BudgetTracker } from './budgetTracker.js';
import type { WaveSummary } from './events.js';
import { NodeWaits } from './nodeWaits.js';
import { outcomeOf, type RollbackDone, type RunOutcome } from './outcome.js';
import { PodRunner } from './podRunner.js';
import {
  byWave,
  inFlightUpgrades,
  rollbackTargets,
  unfinishedRollbacks,
  upgradedByRevision,
  type RollbackTarget,
} from './rollbackTargets.js';
import type { ForcedRollback, RunnerDeps, RunResult, UnfinishedHalt } from './runnerDeps.js';
import { ControlFollower } from './remoteControl.js';
import { RunState } from './runState.js';
import { selectFleet, type FleetSelection } from './select.js';
import { PodQueue } from './podQueue.js';
import { WaveRun } from './waveRun.js';
import { WaveWaits } from './waveWaits.js';

export type { FleetView, ForcedRollback, NodeView, RunnerDeps, RunResult } from './runnerDeps.js';

/** Runs the plan's upgrade from wherever the cluster stands. The selection must have no error problems (callers check, `kwave plan` shows them). */
export async function runRollout(plan: Plan, deps: RunnerDeps): Promise<RunResult> {
  return new Rollout(plan, deps).upgrade();
}

/** Reverts in place every pod this plan's revision upgraded, last wave first. */
export async function rollbackRollout(plan: Plan, deps: RunnerDeps): Promise<RunResult> {
  return new Rollout(plan, deps).rollbackAll();
}

/** One run: the script of waves, gates, halt and rollback. Pods are run by PodRunner, node waits kept by NodeWaits, a wave's window, pre-pull and gates by WaveWaits, shared facts in RunState. */
class Rollout {
  private readonly run: RunState;
  private readonly nodes: NodeWaits;
  private readonly pods: PodRunner;
  private readonly control: ControlFollower;
  private readonly waits: WaveWaits;
  private readonly startedAt: number;
  private readonly summaries: WaveSummary[] = [];
  /** The upgrade's waves, once the fleet is selected. */
  private waveRun: WaveRun | undefined;
  /** A multi-cluster plan's cluster that has run all its waves and waits for the others. */
  private wavesDone = false;

  constructor(
    private readonly plan: Plan,
    private readonly deps: RunnerDeps,
  ) {
    this.run = new RunState(plan, deps);
    this.nodes = new NodeWaits(this.run);
    this.pods = new PodRunner(this.run, this.nodes);
    this.control = new ControlFollower(this.run);
    this.waits = new WaveWaits(this.run);
    this.startedAt = this.run.now();
    // A stop wakes every pod waiting for the budget, so they can give up, and says what the run still waits for.
    deps.stop.addEventListener('abort', () => this.nodes.onStop(), { once: true });
    deps.abort?.addEventListener('abort', () => this.run.budget?.wake(), { once: true });
    deps.turns?.planHalted.addEventListener('abort', () => this.onPlanHalted(), { once: true });
  }

  /**
   * Another cluster of the plan halted: this one halts too (nothing new starts, pods in flight
   * finish, then the rollback policy). A cluster that already ran all its waves stays as it is
   * unless the policy reverts every upgraded pod (`all`): it changed, so it is rolled back.
   */
  private onPlanHalted(): void {
    if (this.wavesDone && this.plan.failurePolicy.rollback !== 'all') return;
    this.run.halt('cluster', String(this.deps.turns?.planHalted.reason));
  }

  /** Selects the fleet and starts following its readiness; call the result when done. */
  private begin(): { selection: FleetSelection; untrack: () => void } {
    const selection = selectFleet(this.plan, this.deps.view.list(), this.deps.zones);
    this.run.budget = new BudgetTracker(
      [...selection.selected, ...selection.leaving],
      selection.budget,
      this.plan.strategy.concurrency,
      this.deps.onUnavailable,
      this.run.now,
      this.plan.readinessGate.conditionType,
    );
    this.run.maxFailed = selection.maxFailed;
    const unwatchPods = this.run.budget.follow((listener) => this.deps.view.onChange(listener));
    const unwatchNodes = this.deps.nodes?.onChange((name) => this.nodes.onNodeChange(name));
    const unwatchPdbs = this.deps.disruptionBudgets?.onChange(() => this.run.budget.wake());
    return {
      selection,
      untrack: () => {
        unwatchPods();
        unwatchNodes?.();
        unwatchPdbs?.();
        this.nodes.close();
      },
    };
  }

  // ---- the upgrade, a script of waves -------------------------------------------------------

  async upgrade(): Promise<RunResult> {
    const begun = this.begin();
    let selection = begun.selection;
    const untrack = begun.untrack;
    try {
      const force = this.deps.force ?? [];
      const forceFailure = force.length > 0 ? await this.rollbackForced(force) : undefined;
      // The forced pods are now this revision's to upgrade: select again.
      if (force.length > 0) selection = selectFleet(this.plan, this.deps.view.list(), this.deps.zones);
      const { partition } = selection;
      this.run.emit({
        event: 'rollout-start',
        revision: this.plan.revision,
        direction: 'upgrade',
        selected: selection.selected.length,
        alreadyDone: selection.done.length,
        upgradedEarlier: upgradedByRevision(
          selection.done.map((p) => p.pod),
          this.plan,
        ).length,
        waves: partition.waveCount,
        deferred: partition.deferred.length,
        budget: selection.budget,
        concurrency: this.plan.strategy.concurrency,
        resumed: selection.resumed.length > 0 || partition.satisfied.length > 0,
        ...(this.deps.resumeHalt ? { halted: this.deps.resumeHalt.message } : {}),
      });
      if (forceFailure !== undefined) {
        this.run.halt('failures', forceFailure, 0);
        return await this.finish(0);
      }
      if (this.deps.resumeHalt) return await this.carryOnHalt(this.deps.resumeHalt, selection);
      // From here on `kwave pause` and `kwave abort` reach this run (a pause already standing at once).
      this.control.start();

      const resumed = new Set(selection.resumed.map(podKey));
      const waveCount = partition.waveCount;
      // One queue for every wave: a pod that cannot count in its own wave leaves its place to the next.
      const queue = new PodQueue([...partition.waves.flatMap((w) => w.pods), ...partition.deferred], (p) =>
        this.nodes.nodeOf(p),
      );
      this.waveRun = new WaveRun(
        this.run,
        this.nodes,
        this.pods,
        this.waits,
        queue,
        selection.done.length,
        this.summaries,
      );
      let previous = partition.satisfied.length > 0 ? Math.max(...partition.satisfied) : 0;
      // The plan may have halted (in another cluster) before this run began.
      if (this.deps.turns?.planHalted.aborted) this.onPlanHalted();
      for (const wave of partition.waves) {
        // A multi-cluster plan: wait for this cluster's turn (false: the plan halted, or a stop).
        if (this.deps.turns && !(await this.deps.turns.startWave(wave.index, this.deps.stop))) break;
        if (!(await this.earlierRunsGatesPassed(previous, wave.index, waveCount))) return await this.finish(0);
        await this.control.whilePaused();
        if (this.run.stopping) break;
        const ran = await this.waveRun.wave(wave, waveCount, resumed);
        if (ran === 'ended') return await this.finish(0);
        if (ran === 'stopping') break;
        previous = wave.index;
        if (this.run.stopping) break;
        if (!(await this.waits.gates(wave.index, waveCount))) return await this.finish(0);
      }
      if (this.deps.turns && !this.run.stopping) {
        // Done here; a halt elsewhere before every cluster is done may still call for a rollback.
        this.wavesDone = true;
        await this.deps.turns.allDone(this.deps.stop);
      }
      return await this.finish(queue.size);
    } finally {
      this.control.stop();
      untrack();
    }
  }

  /**
   * Resuming after waves an earlier run completed: the gates after the last of them must still
   * have passed, in that run (the record says) or now. False when the rollout must end.
   */
  private async earlierRunsGatesPassed(previous: number, wave: number, waveCount: number): Promise<boolean> {
    if (
      previous === 0 ||
      previous !== wave - 1 ||
      this.summaries.some((s) => s.wave === previous) ||
      this.deps.gatesPassed?.(previous)
    )
      return true;
    return this.waits.gates(previous, waveCount);
  }

  /** Ends the upgrade: the rollback a halt calls for, then the outcome. */
  private async finish(deferred: number): Promise<RunResult> {
    await this.nodes.settle();
    const rollback = this.run.haltMessage !== undefined ? await this.rollbackAfterHalt() : undefined;
    const outcome = outcomeOf({
      leftForNodes: [...this.nodes.leftForNodes.values()],
      direction: 'upgrade',
      ...(this.run.haltMessage !== undefined ? { haltMessage: this.run.haltMessage } : {}),
      ...(rollback ? { rollback } : {}),
      ...(this.waveRun?.shortWave !== undefined ? { shortWave: this.waveRun.shortWave } : {}),
      interrupted: this.run.interrupted,
      ...(this.run.lostLease !== undefined ? { lostLease: this.run.lostLease } : {}),
      deferred,
      upgraded: this.run.upgraded,
      failed: this.run.failures.length,
      ran: this.summaries.reduce((n, s) => n + s.pods, 0),
    });
    return this.end(outcome, this.summaries);
  }

  private end(outcome: RunOutcome, waves: WaveSummary[]): RunResult {
    const waitingForNodes = [...this.nodes.leftForNodes.values()];
    this.run.emit({
      event: 'rollout-end',
      ...outcome,
      waves: waves.map((s) => ({ ...s })),
      durationMs: this.run.now() - this.startedAt,
      ...(waitingForNodes.length > 0 ? { waitingForNodes } : {}),
    });
    return { ...outcome, waves };
  }

  // ---- --force, and a halt a killed run left -------------------------------------------------

  /**
   * `--force`: rolls the pods another revision left mid-flight back with that revision's flow,
   * like any rollback (budget, concurrency, events). Undefined when every one came back (or
   * vanished); else why the run must not go on, naming the pod.
   */
  private async rollbackForced(force: readonly ForcedRollback[]): Promise<string | undefined> {
    const targets: RollbackTarget[] = [];
    for (const f of force) {
      const pod = this.deps.view.get(f.namespace, f.name);
      if (!pod) continue;
      const st = readState(pod);
      targets.push({
        namespace: f.namespace,
        name: f.name,
        uid: pod.metadata?.uid ?? '',
        pod,
        wave: st.kind === 'ok' ? st.state.wave : 0,
      });
      this.run.forcedRevision.set(`${f.namespace}/${f.name}`, f.revision);
    }
    if (targets.length === 0) return undefined;
    this.run.emit({ event: 'rollback-start', pods: targets.length, scope: 'all', forced: true });
    try {
      await this.rollbackPods(targets, { evenIfStopped: false });
    } finally {
      this.run.forcedRevision.clear();
    }
    const failed = this.run.rollbackFailures[0];
    if (!failed) return undefined;
    const revision = force.find((f) => `${f.namespace}/${f.name}` === failed.pod)?.revision ?? '?';
    return `--force could not roll back ${failed.pod} (left mid-flight by revision ${revision}): ${failed.reason}: ${failed.message}; nothing of this revision was started`;
  }

  /**
   * The halt an earlier run decided and did not see through (`resumeHalt`): nothing new starts;
   * the upgrades it left in flight finish, as they would have in that run; then its rollback.
   * Pods whose rollback that run finished carry this revision's rollback state with the gate open:
   * no target of either step, so none is patched twice.
   */
  private async carryOnHalt(halt: UnfinishedHalt, selection: FleetSelection): Promise<RunResult> {
    this.run.currentWave = halt.wave;
    // The halted run's failures (from its record), and pods its rollback left mid-way, are this
    // halt's to roll back whatever the scope.
    const atTarget = new Set(selection.done.map(podKey));
    for (const pod of new Set([
      ...halt.failed.filter((p) => !atTarget.has(p)),
      ...unfinishedRollbacks(this.deps.view.list(), this.plan),
    ])) {
      this.run.failures.push({ pod, reason: 'Failed', message: 'failed in the run that halted' });
    }
    this.run.halt('failures', halt.message, halt.wave);
    const inFlight = inFlightUpgrades(this.deps.view.list(), this.plan, halt.wave);
    this.run.finishingAfterHalt = true;
    try {
      for (const [wave, group] of byWave(inFlight)) {
        await this.pods.runPods(group, wave, 'upgrade', {
          wave,
          pods: group.length,
          upgraded: 0,
          failed: 0,
          vanished: 0,
        });
      }
    } finally {
      this.run.finishingAfterHalt = false;
    }
    return this.finish(0);
  }

  // ---- rollback after a halt ----------------------------------------------------------------

  /** Carries out `failurePolicy.rollback` after a halt; undefined when there was nothing to do. */
  private async rollbackAfterHalt(): Promise<RollbackDone | undefined> {
    const scope = this.plan.failurePolicy.rollback;
    if (scope === 'none' || this.deps.abort?.aborted || this.run.fatal !== undefined) return undefined;
    const failed = this.run.failedPods();
    const pods = rollbackTargets(this.deps.view.list(), this.plan, scope, failed, this.run.currentWave);
    if (pods.length === 0) return undefined;
    // Written before the first rollback patch: a run killed from here on is resumed as this halt.
    await this.deps.persistHalt?.();
    this.run.emit({ event: 'rollback-start', pods: pods.length, scope });
    const summaries = await this.rollbackPods(pods, { evenIfStopped: true });
    return {
      scope,
      pods: summaries.reduce((n, w) => n + w.pods, 0),
      reverted: summaries.reduce((n, w) => n + w.upgraded, 0),
    };
  }

  // ---- kwave rollback ------------------------------------------------------------------------

  async rollbackAll(): Promise<RunResult> {
    const { selection, untrack } = this.begin();
    try {
      const pods = upgradedByRevision(this.deps.view.list(), this.plan);
      this.run.emit({
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
      // `kwave pause` holds back new reverts; `kwave abort` halts the rollback (remoteControl.ts).
      this.control.start();
      this.run.emit({ event: 'rollback-start', pods: pods.length, scope: 'all' });
      const summaries = await this.rollbackPods(pods, { evenIfStopped: false });
      this.summaries.push(...summaries);
      const outcome = outcomeOf({
        direction: 'rollback',
        ...(this.run.haltMessage !== undefined ? { haltMessage: this.run.haltMessage } : {}),
        leftForNodes: [...this.nodes.leftForNodes.values()],
        interrupted: this.run.interrupted,
        ...(this.run.lostLease !== undefined ? { lostLease: this.run.lostLease } : {}),
        reverted: summaries.reduce((n, s) => n + s.upgraded, 0),
        failed: summaries.reduce((n, s) => n + s.failed, 0),
      });
      return this.end(outcome, summaries);
    } finally {
      this.control.stop();
      untrack();
    }
  }

  /**
   * Rolls pods back wave by wave (last first), under the same budget and concurrency. After a
   * halt (`evenIfStopped`) it runs to its end whatever the first signal said: failed pods must
   * not stay drained. `kwave rollback` itself stops on the first signal like a run.
   */
  private async rollbackPods(
    pods: readonly RollbackTarget[],
    options: { evenIfStopped: boolean },
  ): Promise<WaveSummary[]> {
    const out: WaveSummary[] = [];
    this.run.rollingBackAfterHalt = options.evenIfStopped;
    this.run.budget.exemptWhileRollingBack(pods.map(podKey));
    try {
      for (const [wave, group] of byWave(pods)) {
        if (this.run.stopping) break;
        const summary: WaveSummary = { wave, pods: group.length, upgraded: 0, failed: 0, vanished: 0 };
        await this.pods.runPods(group, wave, 'rollback', summary);
        out.push(summary);
      }
    } finally {
      this.run.rollingBackAfterHalt = false;
      this.run.budget.exemptWhileRollingBack([]);
    }
    return out;
  }
}
