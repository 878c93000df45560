// Who may use the dashboard's HTTP server, and how a page proves it. Pure.
//
// - On a loopback address only this machine's browsers reach the server; a request must name the
//   server by a loopback Host (`127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`), so a web page
//   elsewhere cannot reach it through a name it points at 127.0.0.1 (DNS rebinding).
// - On any other address anyone who reaches the port could act with the user's credentials: every
//   request must carry the access token kwave printed, once in the URL (`/?token=…`, then kept in
//   an HttpOnly, SameSite=Strict cookie) or as `Authorization: Bearer …`.
// - Every action (POST) must carry the page's CSRF token in `X-Kwave-Csrf`: another site's page
//   cannot read it, and cannot send the header without a CORS preflight, which is never answered.
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

export const TOKEN_COOKIE = 'kwave_dashboard_token';
export const CSRF_HEADER = 'x-kwave-csrf';

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

const sameSecret = (given: string | undefined, expected: string): boolean => {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

export interface AccessPolicy {
  /** Required on every request when the server listens beyond loopback. */
  token?: string;
  csrf: string;
  /** The port, for the loopback Host check. */
  port: number;
}

export interface RequestFacts {
  host?: string;
  cookie?: string;
  authorization?: string;
  /** The `token` query parameter. */
  queryToken?: string;
}

export type AccessDecision =
  | { kind: 'allowed' }
  /** The token came in the URL: keep it in a cookie and send the browser to the URL without it. */
  | { kind: 'set-cookie' }
  | { kind: 'denied'; status: 401 | 403; message: string };

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

export function checkAccess(policy: AccessPolicy, req: RequestFacts): AccessDecision {
  if (policy.token === undefined) {
    const hostName = (req.host ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    const hostPort = /:(\d+)$/.exec(req.host ?? '')?.[1];
    if (!isLoopback(hostName) || hostPort !== String(policy.port))
      return { kind: 'denied', status: 403, message: `Host "${req.host ?? ''}" is not this loopback server` };
    return { kind: 'allowed' };
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.authorization ?? '')?.[1];
  if (sameSecret(cookieValue(req.cookie, TOKEN_COOKIE), policy.token) || sameSecret(bearer, policy.token))
    return { kind: 'allowed' };
  if (sameSecret(req.queryToken, policy.token)) return { kind: 'set-cookie' };
  return {
    kind: 'denied',
    status: 401,
    message: 'this dashboard needs the access token kwave dashboard printed: open the URL it printed (…/?token=…)',
  };
}

export function csrfMatches(policy: AccessPolicy, header: string | undefined): boolean {
  return sameSecret(header, policy.csrf);
}

export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
}
