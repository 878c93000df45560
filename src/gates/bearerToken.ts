// Bearer tokens for gates: read when a gate runs from the environment variable or file the plan
// names (never from the plan itself), and kept out of everything kwave prints or stores.
import type { BearerAuth } from '../plan/types.js';

export interface TokenSources {
  env: Record<string, string | undefined>;
  readFile: (path: string) => Promise<string>;
}

/** The token (none when the gate has no auth), or why it cannot be had. Read fresh each time: mounted token files rotate. */
export async function readBearerToken(
  auth: BearerAuth | undefined,
  from: TokenSources,
): Promise<{ token?: string; error?: string }> {
  if (auth?.bearerTokenEnv) {
    const token = from.env[auth.bearerTokenEnv]?.trim();
    return token
      ? { token }
      : { error: `bearer token: environment variable ${auth.bearerTokenEnv} is not set or empty` };
  }
  if (auth?.bearerTokenFile) {
    try {
      const token = (await from.readFile(auth.bearerTokenFile)).trim();
      return token ? { token } : { error: `bearer token: file ${auth.bearerTokenFile} is empty` };
    } catch (err) {
      return {
        error: `bearer token: cannot read ${auth.bearerTokenFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      };
    }
  }
  return {};
}

/** `text` with every occurrence of `token` replaced: a server may echo the Authorization header back. */
export function redactToken(text: string, token: string | undefined): string {
  // Very short "tokens" would redact ordinary words; no real bearer token is that short.
  if (!token || token.length < 4) return text;
  return text.split(token).join('[redacted]');
}
