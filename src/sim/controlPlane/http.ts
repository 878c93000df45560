// The launcher's own probes of the components: one GET over HTTP(S), status and body.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface ProbeOptions {
  caPem?: string;
  token?: string;
  /** For a component's self-signed serving certificate, which no CA vouches for. */
  insecure?: boolean;
  timeoutMs?: number;
}

export function probe(url: string, opts: ProbeOptions = {}): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      {
        method: 'GET',
        headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
        ...(u.protocol === 'https:' ? { ca: opts.caPem, rejectUnauthorized: !opts.insecure } : {}),
        timeout: opts.timeoutMs ?? 5_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer in ${opts.timeoutMs ?? 5_000} ms`)));
    req.on('error', reject);
    req.end();
  });
}
