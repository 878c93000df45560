// The URL of a webhook gate or a notification receiver: written in the plan (`url`), or kept out
// of it in an environment variable (`urlEnv`) or a file (`urlFile`), read each time it is used,
// as bearer tokens are. However it is given, it is shown only through redactUrl.
import type { UrlSource } from '../plan/types.js';
import { redactUrl } from '../redactUrl.js';
import { readSecret, type SecretSources } from './secretSource.js';

/** The URL, or why it cannot be had (never quoting what the variable or file holds). */
export async function readUrl(source: UrlSource, from: SecretSources): Promise<{ url: string } | { error: string }> {
  if (source.url !== undefined) return { url: source.url };
  const where = source.urlEnv ? `environment variable ${source.urlEnv}` : `file ${source.urlFile ?? ''}`;
  const { value, error } = await readSecret({ env: source.urlEnv, file: source.urlFile }, 'url', from);
  if (error !== undefined) return { error };
  if (value === undefined) return { error: 'url: the plan names no url, urlEnv or urlFile' };
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return { error: `url: ${where} does not hold a URL` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { error: `url: ${where} holds a ${parsed.protocol.replace(/:$/, '')} URL, not http:// or https://` };
  if (parsed.username || parsed.password)
    return { error: `url: ${where} holds a URL with a user or password in it (use auth for credentials)` };
  return { url: value };
}

/** The URL as shown before it is read: redacted, or where it will be read from. */
export function urlSourceName(source: UrlSource): string {
  if (source.url !== undefined) return redactUrl(source.url);
  return source.urlEnv ? `the URL in $${source.urlEnv}` : `the URL in ${source.urlFile ?? ''}`;
}
