// Bearer-token authentication: the only credential the simulated cluster accepts is the token it
// wrote into its kubeconfig.
import { timingSafeEqual } from 'node:crypto';

export function isAuthorized(authorization: string | undefined, token: string): boolean {
  if (!authorization) return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) return false;
  const given = Buffer.from(m[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
