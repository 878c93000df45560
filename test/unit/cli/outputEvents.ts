// Builds synthetic rollout event sequences for the reporter tests.
import type { RolloutEvent, RolloutEventBody, WaveSummary } from '../../../src/rollout/events.js';

export class EventScript {
  readonly events: RolloutEvent[] = [];
  private t: number;

  constructor(
    readonly plan = 'web',
    start = Date.parse('2030-01-02T12:01:00Z'),
  ) {
    this.t = start;
  }

  /** Moves the event clock on. */
  wait(ms: number): this {
    this.t += ms;
    return this;
  }

  add(body: RolloutEventBody): this {
    this.events.push({ time: new Date(this.t).toISOString(), plan: this.plan, ...body } as RolloutEvent);
    return this;
  }

  get nowMs(): number {
    return this.t;
  }
}

/** A complete rollout of `pods` pods (`web/web-0` …) in the given waves; pod `failing` fails. */
export function rolloutScript(waves: number[], opts: { failing?: string; podMs?: number } = {}): EventScript {
  const s = new EventScript();
  const total = waves.reduce((a, b) => a + b, 0);
  s.add({
    event: 'rollout-start',
    revision: 'r1',
    direction: 'upgrade',
    selected: total,
    alreadyDone: 0,
    waves: waves.length,
    deferred: 0,
    budget: 5,
    concurrency: 5,
    resumed: false,
  });
  let next = 0;
  const summaries: WaveSummary[] = [];
  waves.forEach((n, i) => {
    const wave = i + 1;
    s.add({ event: 'wave-start', wave, waves: waves.length, pods: n, target: next + n });
    let failed = 0;
    for (let k = 0; k < n; k++) {
      const pod = `web/web-${next + k}`;
      s.add({ event: 'pod-start', wave, pod });
      s.add({ event: 'pod-step', wave, pod, step: 'patch', message: 'setting nginx' });
      s.wait(opts.podMs ?? 2100);
      if (pod === opts.failing) {
        failed++;
        s.add({
          event: 'pod-end',
          wave,
          pod,
          result: 'failed',
          reason: 'ErrImagePull',
          message: 'pull failed',
          durationMs: opts.podMs ?? 2100,
        });
      } else {
        s.add({ event: 'pod-end', wave, pod, result: 'upgraded', message: 'upgraded', durationMs: opts.podMs ?? 2100 });
      }
    }
    const summary: WaveSummary = {
      wave,
      pods: n,
      upgraded: n - failed,
      failed,
      vanished: 0,
      durationMs: n * (opts.podMs ?? 2100),
    };
    summaries.push(summary);
    s.add({ event: 'wave-end', wave, summary });
    next += n;
  });
  s.add({
    event: 'rollout-end',
    phase: 'Completed',
    exitCode: 0,
    message: `${total} pods upgraded`,
    waves: summaries,
    durationMs: s.nowMs - Date.parse(s.events[0]!.time),
  });
  return s;
}

/** A CliIO that keeps what is written. */
export function captureIO(tty = false, columns = 80) {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = { write: (s: string) => (out.push(s), true), isTTY: tty, columns };
  return {
    io: { stdout, stderr: { write: (s: string) => (err.push(s), true) }, env: {} },
    stdout,
    text: () => out.join(''),
    errText: () => err.join(''),
  };
}

/** Removes ANSI escape sequences (cursor moves, erases). */
export function stripAnsi(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\x1B\[[0-9;?]*[A-Za-z]/g, '').replace(/\x1B[78]/g, '');
}
