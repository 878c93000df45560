// Parses `--metrics-address`: `HOST:PORT`, `[IPv6]:PORT`, `:PORT` (every interface) or `off`.
import { isIP } from 'node:net';
import { KwaveError } from '../errors.js';

export interface ListenAddress {
  /** undefined: every interface (the `:PORT` form). */
  host: string | undefined;
  /** 0 asks the OS for a free port. */
  port: number;
}

const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * `off` (any case) gives null; anything malformed throws a USAGE KwaveError that shows the forms
 * accepted. `flag` names the option in the message (`kwave dashboard --address` parses the same forms).
 */
export function parseMetricsAddress(text: string, flag = '--metrics-address'): ListenAddress | null {
  const raw = text.trim();
  if (raw.toLowerCase() === 'off') return null;
  const bad = (why: string) =>
    new KwaveError(
      'USAGE',
      `${flag} "${text}": ${why}; expected HOST:PORT (e.g. 127.0.0.1:9464), [::1]:9464, :9464${flag === '--metrics-address' ? ' or off' : ''}`,
    );

  const colon = raw.lastIndexOf(':');
  if (colon < 0) throw bad('no port');
  let host = raw.slice(0, colon);
  const portText = raw.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) throw bad(`port "${portText}" is not a number`);
  const port = Number(portText);
  if (port > 65535) throw bad(`port ${port} is above 65535`);

  if (host.startsWith('[')) {
    if (!host.endsWith(']')) throw bad('unclosed "["');
    host = host.slice(1, -1);
    if (isIP(host) !== 6) throw bad(`"${host}" is not an IPv6 address`);
    return { host, port };
  }
  if (host === '') return { host: undefined, port };
  if (host.includes(':')) throw bad('write an IPv6 host in brackets');
  if (isIP(host) === 0 && !HOSTNAME.test(host)) throw bad(`"${host}" is not a host name or IP address`);
  return { host, port };
}

/** `host:port` for messages and URLs, with IPv6 in brackets. */
export function formatHostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
