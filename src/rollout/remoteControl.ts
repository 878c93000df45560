// What one run does with remote control (`kwave pause | resume | abort`, the RemoteControl port
// of RunnerDeps): an abort halts it as a failure would (pods in flight finish, then the plan's
// rollback policy); a pause holds back every new pod start and the next wave until it is
// resumed, and says so with a `paused` event (the record's phase becomes Paused) and a `resumed`
// one. A rollback after a halt is never held back: failed pods must not stay drained.
// `kwave rollback` follows it too: a pause holds back the next pod's revert (pods in flight
// finish); an abort halts the rollback: no pod starts reverting any more, pods in flight finish,
// and it ends Halted, exit 3 (not 4: a Job retrying it would undo what a person stopped); the
// pods not reverted keep the new image until `kwave rollback` runs again.
import type { ControlNote } from './runnerDeps.js';
import type { RunState } from './runState.js';

export class ControlFollower {
  private readonly waiters = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly run: RunState) {}

  /** Starts following (and acts at once on what already stands: a run started while paused waits). */
  start(): void {
    const control = this.run.deps.control;
    if (!control) return;
    this.unsubscribe = control.onChange(() => this.check());
    this.run.deps.stop.addEventListener('abort', () => this.wakeAll(), { once: true });
    this.check();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.wakeAll();
  }

  /** Resolves once no pause holds the run back, or once nothing more may start anyway. */
  async whilePaused(): Promise<void> {
    while (this.run.holdingStarts && !this.run.stopping) {
      await new Promise<void>((resolve) => this.waiters.add(resolve));
    }
  }

  private check(): void {
    const { run } = this;
    const control = run.deps.control!;
    const abort = control.aborted();
    if (abort && run.haltMessage === undefined)
      run.halt('aborted', `aborted by ${abort.by} (kwave abort at ${abort.at})`);
    const pause = abort ? undefined : control.paused();
    if (pause && !run.pausedBy && run.haltMessage === undefined) {
      run.pausedBy = pause;
      run.emit({
        event: 'paused',
        wave: run.currentWave,
        by: pause.by,
        at: pause.at,
        inFlight: run.budget?.inFlightCount ?? 0,
      });
    } else if (!pause && run.pausedBy) {
      run.pausedBy = undefined;
      if (!abort) {
        const by: ControlNote = control.resumed() ?? { by: 'unknown', at: new Date(run.now()).toISOString() };
        run.emit({ event: 'resumed', wave: run.currentWave, by: by.by, at: by.at });
      }
    }
    run.budget?.wake();
    this.wakeAll();
  }

  private wakeAll(): void {
    const all = [...this.waiters];
    this.waiters.clear();
    for (const w of all) w();
  }
}
