// Bearer tokens for gates: read when a gate runs from the environment variable or file the plan
// names (never from the plan itself), and kept out of everything kwave prints or stores.
import type { BearerAuth } from '../plan/types.js';
import { readSecret, type SecretSources } from './secretSource.js';

export type TokenSources = SecretSources;

/** The token (none when the gate has no auth), or why it cannot be had. Read fresh each time: mounted token files rotate. */
export async function readBearerToken(
  auth: BearerAuth | undefined,
  from: TokenSources,
): Promise<{ token?: string; error?: string }> {
  const { value, error } = await readSecret(
    { env: auth?.bearerTokenEnv, file: auth?.bearerTokenFile },
    'bearer token',
    from,
  );
  return error ? { error } : value ? { token: value } : {};
}

/** `text` with every occurrence of `token` replaced: a server may echo the Authorization header back. */
export function redactToken(text: string, token: string | undefined): string {
  // Very short "tokens" would redact ordinary words; no real bearer token is that short.
  if (!token || token.length < 4) return text;
  return text.split(token).join('[redacted]');
}
