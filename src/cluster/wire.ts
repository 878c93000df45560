// Plain HTTPS to the API server for the requests kwave makes per pod (list, get, the patches):
// the body is parsed once with JSON.parse and handed back as wire JSON, for decode.ts to pick
// from. client-node's typed calls would run every pod through its ObjectSerializer and an
// Observable chain on top; at fleet scale that is most of kwave's CPU. Connection and auth stay
// client-node's: each request takes its TLS options, headers (bearer token, exec plugins, …) and
// agent from KubeConfig.applyToHTTPSOptions, exactly as the typed calls do.
//
// One request costs no AbortController and no listener on a shared signal: the timeout is the
// socket's, and closing the client destroys the requests still open.
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeError, kubeErrorFromResponse, toKubeError } from './kubeError.js';

export interface WireRequest {
  method: 'GET' | 'PATCH' | 'POST' | 'PUT' | 'DELETE';
  /** Path under the server URL, e.g. `/api/v1/namespaces/default/pods`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
}

export interface WireOptions {
  timeoutMs: number;
  /** Reuse one keep-alive agent (client-node makes a new one per request). */
  keepAlive: boolean;
}

/** `?a=1&b=x` from the defined entries, in the given order. Pure. */
export function queryString(query: WireRequest['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

export class WireClient {
  private sharedAgent?: https.Agent;
  private readonly open = new Set<http.ClientRequest>();
  private closed = false;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly options: WireOptions,
  ) {}

  /** Sends one request; resolves with the parsed JSON body of a 2xx answer, else throws KubeError. */
  async send(req: WireRequest): Promise<unknown> {
    if (this.closed) throw new KubeError(0, 'Closed', 'the cluster connection is closed');
    const server = this.kubeConfig.getCurrentCluster()?.server;
    if (!server) throw new KubeError(0, 'ConnectionError', 'no current cluster in the kubeconfig');
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const url = new URL(server.replace(/\/+$/, '') + req.path + queryString(req.query));
    const headers: Record<string, string> = { Accept: 'application/json' };
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    if (payload) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const agent = this.agentFor(opts.agent);
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise<unknown>((resolve, reject) => {
      const request = transport.request(url, { method: req.method, headers, agent, timeout: this.options.timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('error', (err) => reject(toKubeError(err)));
        res.on('end', () => {
          this.open.delete(request);
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            try {
              resolve(text ? JSON.parse(text) : undefined);
            } catch {
              reject(new KubeError(status, 'BadResponse', `the API server answered ${status} with a body that is not JSON`));
            }
            return;
          }
          const responseHeaders: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') responseHeaders[k] = v;
          reject(kubeErrorFromResponse(status, text, responseHeaders));
        });
      });
      this.open.add(request);
      request.on('timeout', () => request.destroy(new KubeError(0, 'Timeout', `no answer to ${req.method} ${req.path} within ${this.options.timeoutMs} ms`)));
      request.on('error', (err) => {
        this.open.delete(request);
        reject(toKubeError(err));
      });
      request.end(payload);
    });
  }

  /** Destroys the requests still open and the pooled connections. */
  close(): void {
    this.closed = true;
    for (const r of this.open) r.destroy(new KubeError(0, 'Closed', 'the cluster connection was closed'));
    this.open.clear();
    this.sharedAgent?.destroy();
  }

  /** The pooled keep-alive agent with client-node's TLS options, unless a proxy agent (a subclass) is in play. */
  private agentFor(agent: http.Agent | boolean | undefined): http.Agent | undefined {
    if (!(agent instanceof http.Agent)) return undefined;
    if (!this.options.keepAlive || agent.constructor !== https.Agent) return agent;
    this.sharedAgent ??= new https.Agent({ ...(agent as https.Agent).options, keepAlive: true });
    return this.sharedAgent;
  }
}
