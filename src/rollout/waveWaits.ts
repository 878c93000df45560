// What a wave waits for besides its pods: the maintenance window before it, the pre-pull of its
// images, and the gates after it. Each says whether the rollout may go on; a halt it decides is
// recorded on the run (RunState), and every step is reported as an event.
import type { Gate } from '../plan/types.js';
import { gateAppliesAfterWave, type GateVerdict } from './gateCheck.js';
import type { RunState } from './runState.js';
import type { SelectedPod } from './select.js';
import { windowState } from './window.js';

export class WaveWaits {
  constructor(private readonly run: RunState) {}

  /**
   * strategy.prePull: the wave's target images onto its pods' nodes before any of them is
   * drained. False (the rollout halts, no pod touched) when a node cannot pull them.
   */
  async prePull(wave: number, pods: readonly SelectedPod[]): Promise<boolean> {
    const current = pods.map((p) => this.run.deps.view.get(p.namespace, p.name) ?? p.pod);
    const began = this.run.now();
    this.run.emit({ event: 'prepull-start', wave, pods: pods.length });
    const report = this.run.deps.prePull
      ? await this.run.deps.prePull(wave, current)
      : { ok: false, message: 'pre-pull: this run has no way to create puller pods', pulled: [], skipped: [] };
    this.run.emit({
      event: 'prepull-end',
      wave,
      ok: report.ok,
      pulled: report.pulled,
      skipped: report.skipped,
      ...(report.message ? { message: report.message } : {}),
      durationMs: this.run.now() - began,
    });
    if (report.ok) return true;
    this.run.halt('pre-pull', report.message ?? 'pre-pull failed', wave);
    return false;
  }

  /** Checks the gates due after `wave`; false when the rollout must end there (halted or interrupted). */
  async gates(wave: number, waveCount: number): Promise<boolean> {
    for (const gate of this.run.plan.gates) {
      if (!gateAppliesAfterWave(gate, wave, waveCount)) continue;
      this.run.emit({ event: 'gate-start', wave, gate: gate.name });
      const verdict = await this.checkGate(gate, wave);
      this.run.emit({
        event: 'gate-end',
        wave,
        gate: gate.name,
        result: verdict.result,
        message: verdict.message,
        ...(verdict.wouldHave ? { wouldHave: verdict.wouldHave } : {}),
      });
      if (verdict.result === 'interrupted') return false;
      if (verdict.result !== 'passed') {
        this.run.halt('gate', verdict.message, wave);
        return false;
      }
    }
    return true;
  }

  private async checkGate(gate: Gate, wave: number): Promise<GateVerdict> {
    if (!this.run.deps.checkGate)
      return { result: 'failed', message: `${gate.name}: this run has no way to check gates` };
    const approvals = this.run.deps.approvals;
    return this.run.deps.checkGate(gate, {
      wave,
      // A halt (`kwave abort`) ends a gate's pause or wait at once.
      signal: this.run.waitSignal,
      onPause: (msLeft) => this.run.emit({ event: 'gate-pause', wave, gate: gate.name, msLeft }),
      onAwaitingApproval: () => this.run.emit({ event: 'gate-approval-wait', wave, gate: gate.name }),
      onMeasurement: (m, index, count) =>
        this.run.emit({
          event: 'gate-measurement',
          wave,
          gate: gate.name,
          index,
          count,
          value: m.value,
          phase: m.phase,
          message: m.message,
          dryRun: gate.prometheus?.dryRun === true,
        }),
      ...(approvals
        ? {
            isApproved: () => approvals.isApproved(wave),
            waitForApproval: (signal?: AbortSignal) => approvals.waitForApproval(wave, signal),
          }
        : {}),
    });
  }

  /** Waits for the plan's window to open; false when the rollout must end instead (stopped, or a window that never opens). */
  async window(wave: number): Promise<boolean> {
    const window = this.run.plan.window;
    if (!window) return true;
    for (;;) {
      const state = windowState(window, this.run.now());
      if (state.open) return true;
      if (state.opensAtMs === undefined) {
        this.run.halt('gate', 'the maintenance window never opens', wave);
        return false;
      }
      const msLeft = state.opensAtMs - this.run.now();
      this.run.emit({ event: 'window-wait', wave, msLeft, opensAt: new Date(state.opensAtMs).toISOString() });
      // Wake at least every minute so the time left stays current in status output.
      if (!(await this.run.deps.sleep(Math.min(msLeft, 60_000), this.run.waitSignal))) return false;
    }
  }
}
