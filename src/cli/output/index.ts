// The reporter: turns the rollout's events into what a person or a program reads. The runner
// only calls `sink(event)`; how it looks is decided here, once, at the edge.
//
// - `-o json`: one JSON object per event per line on stdout (json.ts).
// - text, not a TTY: one plain line per event worth a line, budget waits throttled; the summary
//   table of waves and a final line at the end (lines.ts, summary.ts).
// - text on a TTY: live bars (overall, current wave) and a status line; notable events above
//   them; the summary at the end (tty.ts).
import type { EventSink, RolloutEvent } from '../../rollout/events.js';
import type { CliIO, OutputFormat } from '../context.js';
import { jsonLine } from './json.js';
import { EventLines } from './lines.js';
import { TtyView, type TtyStream } from './tty.js';

export interface ReporterOptions {
  io: CliIO;
  format: OutputFormat;
  /** Draw live progress (text format only). Usually `io.stdout.isTTY === true`. */
  tty: boolean;
  /** The plan's name. */
  plan: string;
  /** A multi-cluster plan's cluster: text lines start with `[NAME] ` (JSON events carry `cluster`). */
  cluster?: string;
  /** The plan file as the user named it, for hints such as `kwave approve FILE --wave 2`. */
  planFile?: string;
  /** Off a TTY, also print a line when each pod starts and at each of its steps. */
  verbose?: boolean;
  /** Wall clock for the TTY's countdowns and ages (tests pass their own). */
  now?: () => number;
  /** TTY redraws per second (default 8). */
  fps?: number;
}

export interface Reporter {
  /** Give this to the runner. Never throws: an output failure is reported once on stderr. */
  sink: EventSink;
  /** Writes the lines still held (batchedWriter), before something else writes to the same stream. */
  flush(): void;
  /** Stops live drawing and writes anything still buffered. Call once the run is over (also after an error). */
  close(): void;
}

export function createReporter(options: ReporterOptions): Reporter {
  const { io } = options;
  const approveHint = (wave: number) => `kwave approve ${options.planFile ?? options.plan} --wave ${wave}`;
  let complained = false;
  // Output must never stop a rollout half way; say it once and carry on.
  const complain = (err: unknown) => {
    if (complained) return;
    complained = true;
    io.stderr.write(
      `kwave: cannot show progress (a bug, please report it): ${err instanceof Error ? err.message : String(err)}\n`,
    );
  };
  let handle: (event: RolloutEvent) => void;
  let close = () => {};
  let flush = () => {};
  if (options.format !== 'json' && options.tty) {
    const view = new TtyView({
      stream: io.stdout as TtyStream,
      plan: options.plan,
      approveHint,
      now: options.now,
      fps: options.fps,
    });
    handle = (event) => view.handle(event);
    close = () => view.close();
  } else {
    const out = batchedWriter(io.stdout, complain);
    if (options.format === 'json') handle = (event) => out.write(jsonLine(event) + '\n');
    else {
      const lines = new EventLines({ verbose: options.verbose, approveHint });
      const prefix = options.cluster === undefined ? '' : `[${options.cluster}] `;
      handle = (event) => {
        const text = lines.plain(event);
        if (text.length > 0) out.write(text.map((l) => prefix + l + '\n').join(''));
      };
    }
    flush = close = () => out.flush();
  }
  return {
    sink: (event) => {
      try {
        handle(event);
      } catch (err) {
        complain(err);
      }
    },
    flush: () => flush(),
    close: () => close(),
  };
}

/**
 * Lines written together once per turn of the event loop: a 10,000-pod run prints about 100,000
 * lines, and one write (a system call when stdout is a file) per line cost a second of CPU. What
 * is held is written once the callbacks of this turn have run (setImmediate), at 64 KB, and on `flush()`.
 */
function batchedWriter(
  stream: CliIO['stdout'],
  onError: (err: unknown) => void,
): { write(text: string): void; flush(): void } {
  let held = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (held === '') return;
    const text = held;
    held = '';
    try {
      stream.write(text);
    } catch (err) {
      onError(err);
    }
  };
  return {
    write(text) {
      held += text;
      if (held.length >= 65_536) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
