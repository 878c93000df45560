// How kwave shows a URL it was given (a webhook gate's, a notification receiver's) anywhere it
// shows one: messages, the record, Events, `-o json`, metrics, notifications. Only the scheme,
// host and port: a chat webhook's path is its credential (hooks.slack.com/services/T…/B…/secret),
// other services put a token in the query, and userinfo is a password.

/** `scheme://host[:port]`, then `/…` when anything was left out (path, query, fragment or userinfo). */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '(invalid URL)';
  }
  const base = `${u.protocol}//${u.host}`;
  const hidden = (u.pathname !== '' && u.pathname !== '/') || u.search || u.hash || u.username || u.password;
  return hidden ? `${base}/…` : base;
}

/**
 * `text` without the parts of `url` that `redactUrl` leaves out: a server may echo the URL it
 * was asked for (a 404 page, an error body), and a client library may quote it in an error.
 */
export function hideUrlIn(text: string, url: string | undefined): string {
  if (!url) return text;
  let out = text.split(url).join(redactUrl(url));
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return out;
  }
  // Shorter pieces would hide ordinary words ("/", "?a"); a credential is longer.
  const pieces = [u.pathname + u.search, u.search, u.pathname, u.password, u.username];
  for (const piece of pieces) {
    if (piece.length >= 6) out = out.split(piece).join('[redacted]');
  }
  return out;
}
