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

/** The source line and a caret line, or [] when the error has no place in the text. */
function sourceExcerpt(text: string, line: number, col: number): string[] {
  if (line < 1) return [];
  const source = text.split(/\r?\n/)[line - 1];
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

/** Header plus, given the file's `text`, the excerpt: one string with newlines (no trailing newline). */
export function formatError(err: KwaveErrorInfo, text?: string): string {
  const lines = [errorHeader(err)];
  if (text !== undefined && err.pos) lines.push(...sourceExcerpt(text, err.pos.line, err.pos.col));
  return lines.join('\n');
}
