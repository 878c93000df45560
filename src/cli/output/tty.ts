// Live progress on a terminal: cli-progress draws three lines (overall, current wave, status)
// from ProgressState; notable events scroll above them as plain lines; at the end the bars are
// erased and the summary table is printed. The imperative shell around bars.ts and lines.ts.
import cliProgress from 'cli-progress';
import type { RolloutEvent } from '../../rollout/events.js';
import { renderBars, type BarLines, type BarOptions } from './bars.js';
import { EventLines } from './lines.js';
import { advance, initialProgress, type ProgressState } from './progress.js';

/** What cli-progress needs of the stream: a TTY it can move the cursor on. */
export type TtyStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export interface TtyOptions extends BarOptions {
  stream: TtyStream;
  plan: string;
  /** Wall clock for countdowns and elapsed times (tests pass their own). */
  now?: () => number;
  /** Redraws per second (default 8). */
  fps?: number;
}

const ERASE_BELOW = '\x1B[0J';
const SHOW_CURSOR = '\x1B[?25h';

export class TtyView {
  private state: ProgressState;
  private multibar?: cliProgress.MultiBar;
  /** Lines waiting for the next redraw, which writes them above the bars. */
  private pending: string[] = [];
  private readonly lines: EventLines;
  private readonly now: () => number;
  private closed = false;
  private readonly restoreCursor = () => this.options.stream.write(SHOW_CURSOR);

  constructor(private readonly options: TtyOptions) {
    this.state = initialProgress(options.plan);
    this.lines = new EventLines({ approveHint: options.approveHint });
    this.now = options.now ?? Date.now;
  }

  handle(event: RolloutEvent): void {
    if (this.closed) return;
    this.state = advance(this.state, event);
    const lines = this.lines.notable(event);
    if (event.event === 'rollout-end') {
      this.finish(lines);
      return;
    }
    this.pending.push(...lines);
    this.multibar ??= this.startBars();
  }

  /** Stops drawing and writes what is still pending. Safe to call more than once. */
  close(): void {
    this.finish([]);
  }

  private startBars(): cliProgress.MultiBar {
    const stream = this.options.stream;
    const multibar = new cliProgress.MultiBar({
      stream,
      fps: this.options.fps ?? 8,
      hideCursor: true,
      // Autowrap stays on so long event lines wrap instead of being cut; the bar lines are
      // rendered narrower than the terminal, so they never wrap.
      linewrap: true,
      clearOnComplete: true,
      // Countdowns and ages change with time alone; redraw every frame (three short lines).
      forceRedraw: true,
      gracefulExit: false,
    });
    // cli-progress writes logged lines over the bars without clearing the rows below the
    // first; erase the whole bar area first, then write the lines, then the bars come back.
    multibar.on('redraw-pre', () => this.flushPending());
    let frame: BarLines | undefined;
    let frameAt = -1;
    const render = (width: number): BarLines => {
      const now = this.now();
      if (frame === undefined || now !== frameAt) frame = renderBars(this.state, now, width, this.options);
      frameAt = now;
      return frame;
    };
    const line = (pick: keyof BarLines) => (_o: cliProgress.Options, params: cliProgress.Params) =>
      render(params.maxWidth)[pick];
    multibar.create(1, 0, {}, { format: line('overall') });
    multibar.create(1, 0, {}, { format: line('wave') });
    multibar.create(1, 0, {}, { format: line('status') });
    process.on('exit', this.restoreCursor);
    return multibar;
  }

  private flushPending(): void {
    if (this.pending.length === 0) return;
    this.options.stream.write(ERASE_BELOW + this.pending.map((l) => l + '\n').join(''));
    this.pending = [];
  }

  private finish(lines: string[]): void {
    if (this.closed) return;
    this.closed = true;
    if (this.multibar) {
      this.multibar.update(); // draws the last frame, writing pending lines above it
      this.multibar.stop(); // erases the bars (clearOnComplete) and shows the cursor
      process.off('exit', this.restoreCursor);
    }
    this.pending.push(...lines);
    const rest = this.pending.map((l) => l + '\n').join('');
    this.pending = [];
    if (rest) this.options.stream.write(rest);
  }
}
