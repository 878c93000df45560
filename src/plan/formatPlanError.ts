// Plan errors as text for people: `file:line:col path: message`, then the source line with a
// caret under the column. Pure: the CLI decides where it goes.
import type { PlanError } from './planError.js';

/** Source lines longer than this are cut around the caret. */
const MAX_SHOWN = 100;

export function formatPlanErrorHeader(err: PlanError): string {
  const where = err.line > 0 ? `${err.file}:${err.line}:${err.col}` : err.file;
  return `${where} ${err.path ? `${err.path}: ` : ''}${err.message}`;
}

/** The source line and a caret line, or [] when the error has no place in the text. */
export function sourceExcerpt(text: string, line: number, col: number): string[] {
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

/** Header plus excerpt, one string with newlines (no trailing newline). */
export function formatPlanError(err: PlanError, text?: string): string {
  const lines = [formatPlanErrorHeader(err)];
  if (text !== undefined) lines.push(...sourceExcerpt(text, err.line, err.col));
  return lines.join('\n');
}
