// Renders errors for people, once, at the edge. Library code never prints.
import type { KwaveError } from '../errors.js';

export function renderError(err: KwaveError): string {
  const where = err.pos
    ? `${err.pos.file}:${err.pos.line}:${err.pos.col} ${err.pos.path ? err.pos.path + ': ' : ''}`
    : '';
  return `kwave: ${where}${err.message}`;
}
