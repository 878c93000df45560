// Errors as text for people, one way for all: `file:line:col CODE path: message` (the place when
// known), then the source line with a caret under the column when the text is at hand. Pure: the
// CLI decides where it goes and puts its name before it.
import type { KwaveErrorInfo, SourcePos } from './errors.js';

/** Source lines longer than this are cut around the caret. */
const MAX_SHOWN = 100;

function place(pos: SourcePos): string {
  return pos.line > 0 ? `${pos.file}:${pos.line}:${pos.col}` : pos.file;
}

/** The one-line header: `plans/web.yaml:4:21 PLAN_INVALID_VALUE spec.strategy.maxUnavailable: expected …`. */
function errorHeader(err: KwaveErrorInfo): string {
  if (!err.pos) return `${err.code} ${err.message}`;
  return `${place(err.pos)} ${err.code} ${err.pos.path ? `${err.pos.path}: ` : ''}${err.message}`;
}

/** The lines of a text, split once however many errors quote it. */
type SourceLines = readonly string[];

const splitLines = (text: string): SourceLines => text.split(/\r?\n/);

/** The source line and a caret line, or [] when the error has no place in the text. */
function sourceExcerpt(lines: SourceLines, line: number, col: number): string[] {
  if (line < 1) return [];
  const source = lines[line - 1];
  if (source === undefined) return [];
  let start = 0;
  if (source.length > MAX_SHOWN && col > MAX_SHOWN - 20) start = col - (MAX_SHOWN - 20);
  const shown = source.slice(start, start + MAX_SHOWN);
  // Keep tabs in the caret line so the caret sits under the same column as in the source.
  const pad = shown.slice(0, Math.max(col - 1 - start, 0)).replace(/[^\t]/g, ' ');
  const gutter = String(line).padStart(4);
  return [
    `${gutter} | ${start > 0 ? '…' : ''}${shown}`,
    `${' '.repeat(gutter.length)} | ${start > 0 ? ' ' : ''}${pad}^`,
  ];
}

function formatWith(err: KwaveErrorInfo, lines: SourceLines | undefined): string {
  const out = [errorHeader(err)];
  if (lines !== undefined && err.pos) out.push(...sourceExcerpt(lines, err.pos.line, err.pos.col));
  return out.join('\n');
}

/** Header plus, given the file's `text`, the excerpt: one string with newlines (no trailing newline). */
export function formatError(err: KwaveErrorInfo, text?: string): string {
  return formatWith(err, text === undefined ? undefined : splitLines(text));
}

/**
 * Several errors of one text, each as formatError shows it, the text split into lines once (a
 * split per error would be quadratic in a large file); `more` errors left out end the list as
 * `… and 12 more errors`.
 */
export function formatErrors(errors: readonly KwaveErrorInfo[], text?: string, more = 0): string[] {
  const lines = text === undefined ? undefined : splitLines(text);
  const out = errors.map((err) => formatWith(err, lines));
  if (more > 0) out.push(`… and ${more} more error${more === 1 ? '' : 's'}`);
  return out;
}
