// Renders errors for people, once, at the edge, after the command's name. Library code never prints.
import { formatError } from '../errorText.js';
import type { KwaveError } from '../errors.js';

export function renderError(err: KwaveError): string {
  return `kwave: ${formatError(err)}`;
}
