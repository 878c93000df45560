// One wave of an upgrade: it takes pods from the run's queue in order, under the concurrency limit
// and the budget, until its count of selected pods is at the target and nothing is in flight
// (waveFill.ts decides each step). A pod whose node cannot act, that failed or vanished does not
// count, so the next pod in order whose node can act stands in; a wave left short with a gate due
// ends the run before the gate (Partial, or a halt), so no gate judges fewer pods than promised.
import { podKey } from '../inplace/podView.js';
import type { WaveSummary } from './events.js';
import { gateAppliesAfterWave } from './gateCheck.js';
import { nodeHealth } from './nodeHealth.js';
import type { NodeWaits } from './nodeWaits.js';
import type { PodQueue } from './podQueue.js';
import type { PodRunner } from './podRunner.js';
import type { RunState } from './runState.js';
import type { SelectedPod } from './select.js';
import { shortVerdict, waveStep, type WaveStep } from './waveFill.js';
import type { Wave } from './waves.js';
import type { WaveWaits } from './waveWaits.js';

/** 'ended': the rollout ends here (the window, the pre-pull, or a short wave); 'stopping': nothing new may start. */
export type WaveEnd = 'ran' | 'stopping' | 'ended';

export class WaveRun {
  /** Why the run ended Partial before a gate: a short wave whose pods wait for their node. */
  shortWave: string | undefined;

  constructor(
    private readonly run: RunState,
    private readonly nodes: NodeWaits,
    private readonly pods: PodRunner,
    private readonly waits: WaveWaits,
    private readonly queue: PodQueue<SelectedPod>,
    /** Selected pods at the target image before the run. */
    private readonly alreadyDone: number,
    private readonly summaries: WaveSummary[],
  ) {}

  /** Selected pods at the target image now. */
  private get atTarget(): number {
    return this.alreadyDone + this.run.upgraded;
  }

  private readonly canAct = (node: string): boolean => nodeHealth(this.run.deps.nodes?.get(node)).canAct;

  /**
   * One wave, once the window is open. Pods an earlier run left mid-flow (drained, maybe patched)
   * are taken first, all of them, whatever their node, and finished even outside the window: none
   * may stay drained until it opens. One passed over for its node would hold the budget while the
   * wave's own starts wait for it, one of them holding the concurrency slot it needs.
   */
  async wave(wave: Wave<SelectedPod>, waveCount: number, resumed: ReadonlySet<string>): Promise<WaveEnd> {
    const { run } = this;
    const nominal = Math.max(0, wave.target - this.atTarget);
    const summary: WaveSummary = { wave: wave.index, pods: 0, upgraded: 0, failed: 0, vanished: 0 };
    let started = false;
    const startWave = () => {
      started = true;
      run.currentWave = wave.index;
      run.emit({ event: 'wave-start', wave: wave.index, waves: waveCount, pods: nominal, target: wave.target });
      this.summaries.push(summary);
    };
    const leftMidFlow = this.queue.takeFrontWhile((p) => resumed.has(podKey(p)));
    if (leftMidFlow.length > 0) {
      startWave();
      summary.pods += leftMidFlow.length;
      await this.pods.runPods(leftMidFlow, wave.index, 'upgrade', summary);
    }
    if (!(await this.waits.window(wave.index))) return 'ended';
    if (run.stopping) return 'stopping';
    if (!started) startWave();
    if (run.plan.strategy.prePull) {
      const next = this.queue.peek(Math.max(0, wave.target - this.atTarget), this.canAct);
      if (!(await this.waits.prePull(wave.index, next))) return 'ended';
    }
    const step = await this.fill(wave, summary);
    if (step.kind === 'short') {
      const verdict = shortVerdict({
        wave: wave.index,
        target: wave.target,
        atTarget: this.atTarget,
        waitingForNodes: this.nodes.waitingCount,
        failed: run.failures.length,
        gateDue: run.plan.gates.some((g) => gateAppliesAfterWave(g, wave.index, waveCount)),
      });
      if (verdict.kind === 'partial') {
        this.shortWave = verdict.message;
        return 'ended';
      }
      if (verdict.kind === 'halt') {
        run.halt('failures', verdict.message, wave.index);
        return 'ended';
      }
    }
    run.emit({ event: 'wave-end', wave: wave.index, summary: { ...summary } });
    return 'ran';
  }

  /** Takes pods until the wave is done, short, or stopped (waveFill.ts's `waveStep`). */
  private async fill(wave: Wave<SelectedPod>, summary: WaveSummary): Promise<WaveStep> {
    const { run } = this;
    const limit = this.pods.newLimit();
    let pending = 0;
    const settled = () => {
      pending--;
      run.budget.wake();
    };
    for (;;) {
      // A flow its node stopped (a heartbeat late, say) is on its way while anything else is, or
      // once its node is back: no pod stands in for it; when nothing else is and its node is
      // still down, one does, so no wave waits for ever.
      const others = pending + run.budget.inFlightCount;
      const counts = {
        target: wave.target,
        atTarget: this.atTarget,
        pending: pending + this.nodes.midFlowCount(others === 0),
        inFlight: run.budget.inFlightCount,
        queued: this.queue.size,
        stopping: run.stopping,
      };
      let step = waveStep(counts);
      // Parked pods whose node is back are about to be in flight, and a wave left short waits for
      // those whose node is within its grace: asked only when the wave would end, as it looks at
      // every parked pod's node.
      if (step.kind === 'done' || step.kind === 'short') {
        const resuming = this.nodes.resumingCount(step.kind === 'short');
        if (resuming > 0) step = waveStep({ ...counts, inFlight: resuming });
      }
      if (step.kind === 'take') {
        for (let i = 0; i < step.count; i++) {
          const p = this.queue.take(this.canAct);
          if (!p) break;
          pending++;
          summary.pods++;
          this.pods.runPod(p, wave.index, 'upgrade', summary, limit, settled);
        }
        continue;
      }
      if (step.kind === 'wait') {
        await run.budget.nextChange();
        continue;
      }
      if (run.fatal !== undefined) throw run.fatal;
      return step;
    }
  }
}
