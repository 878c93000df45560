// Runs a wave's pods through their in-place flows: at most `concurrency` at once (SlotLimit), each
// starting only when the unavailability budget allows, and counts how each one ended. A pod whose
// node cannot act leaves the limiter and waits apart (nodeWaits.ts). What a flow does per pod is
// inplace/'s business; this only starts, follows and tallies them.
import { runPodFlow, type PodOutcome } from '../inplace/executor.js';
import { podKey } from '../inplace/podView.js';
import type { Direction } from '../inplace/state.js';
import { canStart, heldForGood, heldOnlyByFailures, startBlocker } from './budget.js';
import { pdbBlocker, type PdbBlock } from './disruptionBudget.js';
import type { WaveSummary } from './events.js';
import type { NodeWaits } from './nodeWaits.js';
import { nodeWaitMessage, type NodeDown } from './nodeHealth.js';
import { isFailure, resultOf, type PodResult } from './podEnd.js';
import type { RunState } from './runState.js';
import type { SelectedPod } from './select.js';
import { GAVE_WAY, SlotLimit } from './slotLimit.js';

const unready = (ms: number | undefined) => (ms === undefined ? {} : { unreadyMs: ms });

/** A pod's start from a slot: its pod-start goes out once, with its flow's first step. */
interface SlotStart {
  announced: boolean;
  announce(): void;
}

export class PodRunner {
  /** Waves' first pod starts, for their durations. */
  private readonly firstStart = new Map<WaveSummary, number>();

  constructor(
    private readonly run: RunState,
    private readonly nodes: NodeWaits,
  ) {}

  /**
   * Runs `pods` through their flows under the concurrency limit and the budget. A pod whose node
   * cannot act leaves the limiter and waits apart (`park`), so it holds none of its slots.
   */
  async runPods(pods: readonly SelectedPod[], wave: number, direction: Direction, summary: WaveSummary): Promise<void> {
    const limit = this.newLimit();
    await Promise.all(
      pods.map((p) => new Promise<void>((ended) => this.runPod(p, wave, direction, summary, limit, ended))),
    );
    if (this.run.fatal !== undefined) throw this.run.fatal;
  }

  /**
   * One pod under the wave's concurrency `limit`; `ended` once it has ended, waits apart for its
   * node, was left for the next run, or its flow threw (kept as `run.fatal`). A pod whose node
   * cannot act is parked at once, before it queues for a slot. No promise: a wave queues every pod
   * it takes, so a queued pod holds its callbacks and no more.
   */
  runPod(
    p: SelectedPod,
    wave: number,
    direction: Direction,
    summary: WaveSummary,
    limit: SlotLimit,
    ended: () => void,
  ): void {
    const downNow = this.nodes.nodeDown(p);
    if (downNow) {
      this.park(p, wave, direction, summary, downNow);
      ended();
      return;
    }
    limit.queue(
      podKey(p),
      (queued) => this.runOne(p, wave, direction, summary, queued),
      (down) => {
        if (down) this.park(p, wave, direction, summary, down);
        ended();
      },
      (err) => {
        this.run.fatal ??= err;
        ended();
      },
    );
  }

  /** A wave's concurrency limit: a pod that queues for a slot wakes the starts waiting for the budget. */
  newLimit(): SlotLimit {
    return new SlotLimit(this.run.plan.strategy.concurrency, () => this.run.budget.wake());
  }

  /** Leaves `p` to wait apart for its node, then run outside the wave's limiter. */
  private park(p: SelectedPod, wave: number, direction: Direction, summary: WaveSummary, down: NodeDown): void {
    this.nodes.park(p, wave, direction, down, (queued) => this.runOne(p, wave, direction, summary, queued));
  }

  /**
   * Waits until one more pod may start and counts `key` in flight; false when the rollout stops
   * first. The slot is taken in the same turn as the check: waiters wake together, and a slot
   * taken one await later would let each of them pass the same check (budget overshoot).
   * A candidate already not Ready (left drained by a killed run, say) is not held back by the
   * budget: its start adds no unavailable pod (budget.ts). So when such a pod holds the budget
   * while it queues for a slot of the limiter whose slot this pod holds (`queued`), this pod
   * gives its slot way (SlotLimit): waiting on, each would wait for the other for ever.
   */
  private async acquire(
    wave: number,
    direction: Direction,
    key: string,
    p: SelectedPod,
    queued: ReadonlySet<string>,
  ): Promise<boolean | 'node-down' | typeof GAVE_WAY> {
    const { run } = this;
    let reported = false;
    let heldBy: string | undefined;
    for (;;) {
      if (run.stopping) return false;
      // `kwave pause`: nothing new starts until resumed (a control change wakes the budget's waiters).
      if (run.holdingStarts) {
        await run.budget.nextChange();
        continue;
      }
      if (this.nodes.nodeDown(p)) return 'node-down';
      const req = run.budget.request(key);
      // PDBs are asked in the same turn as the plan's budget, for the same reason.
      const pdb = canStart(req) ? this.pdbHold(p) : undefined;
      if (canStart(req) && !pdb) {
        run.budget.take(key);
        return true;
      }
      if (pdb && pdb.pdb !== heldBy) {
        heldBy = pdb.pdb;
        run.emit({ event: 'pdb-wait', wave, pod: key, pdb: pdb.pdb, message: pdb.message });
      }
      if (startBlocker(req) === 'budget') {
        const holders = run.budget.holders(key);
        if (holders.some((k) => queued.has(k))) return GAVE_WAY;
        const failed = run.failedPods();
        if (!run.rollingBackAfterHalt && !run.finishingAfterHalt && heldOnlyByFailures(holders, req.inFlight, failed)) {
          run.halt(
            'failures',
            `the unavailability budget of ${req.budget} is held by pods that failed (${holders.join(', ')}): no other pod can start`,
          );
          return false;
        }
        // Held only by pods waiting for their nodes past their grace (and failures), none in flight: nothing in this run frees it.
        const staysOut = (k: string) => failed.has(k) || this.nodes.waitsForNodeForGood(k);
        if (
          heldForGood(holders, req.inFlight, staysOut) &&
          this.nodes.leaveBehindBudgetHolders(p, wave, direction, req.budget, holders)
        )
          return false;
        if (!reported) {
          reported = true;
          run.emit({
            event: 'budget-wait',
            wave,
            unavailable: req.unreadyNotInFlight + req.inFlight,
            budget: req.budget,
            holders: holders.slice(0, 5),
          });
        }
      }
      await run.budget.nextChange();
    }
  }

  /** The PodDisruptionBudget that holds `p` back now, if any. */
  private pdbHold(p: SelectedPod): PdbBlock | undefined {
    const view = this.run.deps.disruptionBudgets;
    if (!view) return undefined;
    const pdbs = view.pdbs();
    if (pdbs.length === 0) return undefined;
    return pdbBlocker(
      this.run.deps.view.get(p.namespace, p.name) ?? p.pod,
      pdbs,
      view.pods(),
      this.run.budget.inFlightKeys,
    );
  }

  /** One pod, from the budget to its end; its node's state instead when the node cannot act before it starts, or `gave-way` (acquire). */
  private async runOne(
    p: SelectedPod,
    wave: number,
    direction: Direction,
    summary: WaveSummary,
    queued: ReadonlySet<string>,
  ): Promise<NodeDown | typeof GAVE_WAY | undefined> {
    const { run } = this;
    const key = podKey(p);
    const down = this.nodes.nodeDown(p);
    if (down) return down;
    const acquired = await this.acquire(wave, direction, key, p, queued);
    if (acquired === 'node-down') return this.nodes.nodeDown(p);
    if (acquired === GAVE_WAY) return acquired;
    if (!acquired) return undefined;
    run.budget.wake();
    const began = run.now();
    // Announced with the flow's first step: a start given back at the drain (follow) never began.
    const start: SlotStart = {
      announced: false,
      announce: () => {
        if (start.announced) return;
        start.announced = true;
        if (!this.firstStart.has(summary)) this.firstStart.set(summary, began);
        run.emit({ event: 'pod-start', wave, pod: key });
      },
    };
    return this.follow(p, wave, direction, summary, began, 0, start);
  }

  /**
   * The pod's flow, counted in flight, to its end (`earlierWrites`: what its flows before this
   * one wrote in this run). A flow its node stopped goes on from the pod's state as soon as the
   * node can act again, as a re-run would: at once if the node is back already (it flapped), else
   * once it is back while the run still has work (a heartbeat late for a few seconds on a busy
   * control plane), waiting apart meanwhile (NodeWaits.awaitNode). Only when the run stops, or
   * ends with the node still down, does the pod end `NodeNotReady`, left for the next run.
   * A start from a slot (`start`) is asked the budget again at the drain: `gave-way` when the pod,
   * Ready then, found no room, and it queues again.
   */
  private async follow(
    p: SelectedPod,
    wave: number,
    direction: Direction,
    summary: WaveSummary,
    began: number,
    earlierWrites: number,
    start?: SlotStart,
  ): Promise<typeof GAVE_WAY | undefined> {
    const { run } = this;
    const key = podKey(p);
    let nodeLost = this.nodes.flowStarted(key, p);
    let outcome: PodOutcome;
    try {
      outcome = await this.runFlow(p, wave, direction, key, nodeLost.signal, start);
      // The node stopped acting and is back already (it flapped): the flow goes on at once.
      while (
        outcome.kind === 'aborted' &&
        nodeLost.signal.aborted &&
        !run.deps.abort?.aborted &&
        !this.nodes.nodeDown(p)
      ) {
        const writes = outcome.writes;
        nodeLost = this.nodes.flowStarted(key, p);
        outcome = await this.runFlow(p, wave, direction, key, nodeLost.signal);
        outcome = { ...outcome, writes: outcome.writes + writes };
      }
    } catch (err) {
      // Let the other flows reach a resumable point, then fail the run with this error.
      run.fatal ??= err;
      return;
    } finally {
      this.nodes.flowEnded(key);
      run.budget.release(key);
      // The selection holds the pod as it was before its upgrade, the cache as it is now: once its
      // flow is over, the selection holds the cache's (nothing reads the old one after this),
      // instead of a second, stale view of every pod the run changed.
      p.pod = run.deps.view.get(p.namespace, p.name) ?? p.pod;
    }
    if (outcome.kind === 'aborted' && outcome.backToBudget) {
      // Announced already (a 409 showed it Ready only at a second try): its end said, then queued again.
      if (start?.announced) this.end(p, wave, direction, summary, began, outcome, false);
      return GAVE_WAY;
    }
    start?.announce();
    const ended: PodOutcome = { ...outcome, writes: outcome.writes + earlierWrites };
    const lost = nodeLost.signal.aborted && !run.deps.abort?.aborted;
    const down = lost && ended.kind === 'aborted' ? this.nodes.nodeDown(p) : undefined;
    // A rollback ends here, pending for `kwave rollback`; with countNodeFailures the loss counts when it happens.
    if (down && direction === 'upgrade' && !run.plan.failurePolicy.countNodeFailures && !run.stopping) {
      run.emit({
        event: 'pod-step',
        wave,
        pod: key,
        step: 'wait-node',
        message: nodeWaitMessage(down.node, down.health, run.now()),
      });
      this.nodes.awaitNode(
        p,
        async () => {
          run.budget.take(key);
          run.budget.wake();
          await this.follow(p, wave, direction, summary, began, ended.writes);
        },
        () => this.end(p, wave, direction, summary, began, ended, true),
      );
      return;
    }
    this.end(p, wave, direction, summary, began, ended, lost);
  }

  /** The pod's end (`lost`: its flow was stopped by its node): reported, counted into its wave and the run, a halt if too many failed. */
  private end(
    p: SelectedPod,
    wave: number,
    direction: Direction,
    summary: WaveSummary,
    began: number,
    flowOutcome: PodOutcome,
    lost: boolean,
  ): void {
    const { run } = this;
    const key = podKey(p);
    const outcome = this.nodes.nodeLostOutcome(p, flowOutcome, lost);
    const result = resultOf(outcome, direction);
    run.emit({
      event: 'pod-end',
      wave,
      pod: key,
      result,
      ...('reason' in outcome ? { reason: outcome.reason } : {}),
      message: outcome.message,
      durationMs: run.now() - began,
      ...(resizedBy(flowOutcome) ? { resized: true as const } : {}),
      ...unready(run.budget.unreadyMs(key)),
    });
    summary.durationMs = run.now() - (this.firstStart.get(summary) ?? began);
    this.tally(outcome, result, key, summary, direction);
    if (direction === 'upgrade') run.haltIfTooManyFailed();
  }

  private runFlow(
    p: SelectedPod,
    wave: number,
    direction: Direction,
    key: string,
    nodeLost: AbortSignal,
    start?: SlotStart,
  ): Promise<PodOutcome> {
    const { plan, deps } = this.run;
    let shown: { step: string; message: string } | undefined;
    const s = plan.strategy;
    return runPodFlow(
      { namespace: p.namespace, name: p.name, uid: p.uid },
      {
        plan: plan.name,
        revision: this.run.forcedRevision.get(key) ?? plan.revision,
        wave,
        direction,
        containers: plan.update.containers,
        gate: plan.readinessGate,
        drainMs: s.drainMs,
        drain: s.drain,
        podTimeoutMs: s.podTimeoutMs,
        minReadyMs: s.minReadyMs,
      },
      {
        writer: deps.writer,
        reader: deps.view,
        now: this.run.now,
        // Aborted by a hard abort of the run too (NodeWaits).
        signal: nodeLost,
        ...(start ? { mayDrain: () => this.run.budget.mayDrain(key) && !this.pdbHold(p) } : {}),
        onStep: (step) => {
          start?.announce();
          this.nodes.flowAt(key, step.kind);
          if (!(
            step.kind.startsWith('wait-') ||
            step.kind === 'patch' ||
            step.kind === 'resize' ||
            step.kind.endsWith('-gate')
          ))
            return;
          // A wait looked at again with nothing new to say (the same step and message) is not repeated.
          if (step.kind === shown?.step && step.message === shown.message) return;
          shown = { step: step.kind, message: step.message };
          this.run.emit({ event: 'pod-step', wave, pod: key, step: step.kind, message: step.message });
        },
      },
    );
  }

  /** Counts a finished pod into its wave's summary and, for upgrades, into the run's totals. */
  private tally(outcome: PodOutcome, result: PodResult, key: string, summary: WaveSummary, direction: Direction): void {
    if (result === 'upgraded' || result === 'rolled-back') {
      summary.upgraded++;
      if (direction === 'upgrade') this.run.upgraded++;
    } else if (result === 'vanished') {
      summary.vanished++;
    } else if (isFailure(result)) {
      summary.failed++;
      // A node that stopped acting is not the image's failure, unless the plan says to count it.
      const nodeFailure = 'reason' in outcome && outcome.reason === 'NodeNotReady';
      const failure = { pod: key, reason: 'reason' in outcome ? outcome.reason : result, message: outcome.message };
      if (direction === 'upgrade' && (!nodeFailure || this.run.plan.failurePolicy.countNodeFailures))
        this.run.failures.push(failure);
      if (direction === 'rollback') this.run.rollbackFailures.push(failure);
    }
  }
}

/** Whether a flow's state records a resize (a container's `toResources`). */
function resizedBy(outcome: PodOutcome): boolean {
  const state = 'state' in outcome ? outcome.state : undefined;
  return state !== undefined && Object.values(state.containers).some((c) => c.toResources !== undefined);
}
