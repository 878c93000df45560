// Plain HTTPS to the API server for every request kwave makes: the body is parsed once with
// JSON.parse and handed back as wire JSON, for decode.ts to pick from. client-node's typed calls
// would run every pod through its ObjectSerializer and an Observable chain on top (at fleet scale
// that would be most of kwave's CPU), and loading their generated API and models cost 24 MB and 0.08 s
// at every start. Connection and auth stay client-node's: each request takes its TLS options,
// headers (bearer token, exec plugins, …) and agent from KubeConfig.applyToHTTPSOptions, exactly
// as its own requests do (wireConnection.ts); one exchange is wireExchange.ts.
//
// Watches too (`watch`): the stream is split into lines here and each line parsed once, instead
// of client-node's Watch (node-fetch, a PassThrough and readline per stream: a tenth of kwave's
// CPU at 1,000 pods). They stay on Node's https (a few long streams: nothing per request to save).
import type http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeError, kubeErrorFromResponse, toKubeError } from './kubeError.js';
import { isBlankLine, lineSplitter, peekResourceVersion } from './wireBytes.js';
import { ConnectionCache, type ConnectionOptions } from './wireConnection.js';
import {
  closedError,
  exchangeNode,
  exchangePooled,
  isSuccess,
  readBody,
  singleHeaders,
  type Prepared,
} from './wireExchange.js';
import { queryString, type WireRequest } from './wireRequest.js';

export interface WireOptions extends ConnectionOptions {
  timeoutMs: number;
}

export class WireClient {
  private readonly connections: ConnectionCache;
  private readonly open = new Set<http.ClientRequest>();
  private closed = false;

  constructor(
    kubeConfig: KubeConfig,
    private readonly options: WireOptions,
  ) {
    this.connections = new ConnectionCache(kubeConfig, options);
  }

  /** Sends one request; resolves with the parsed JSON body of a 2xx answer, else throws KubeError. */
  async send(req: WireRequest): Promise<unknown> {
    const prepared = await this.prepare(req);
    const answer = prepared.pool
      ? await exchangePooled(req, prepared.pool, prepared, this.options.timeoutMs)
      : await exchangeNode(req, prepared, this.options.timeoutMs, this.open);
    if (!isSuccess(answer.status)) throw this.refusal(answer.status, answer.body.toString('utf8'), answer.headers());
    const rv = req.reuse && peekResourceVersion(answer.body);
    const held = rv ? req.reuse!(rv) : undefined;
    if (held !== undefined) return held;
    try {
      return answer.body.length ? JSON.parse(answer.body.toString('utf8')) : undefined;
    } catch {
      throw new KubeError(
        answer.status,
        'BadResponse',
        `the API server answered ${answer.status} with a body that is not JSON`,
      );
    }
  }

  /**
   * A watch stream: GET `req` with `watch=true`. Resolves once the server answered 200, with the
   * stream's handle; rejects (KubeError) when it answered otherwise or could not be reached.
   * Then `onEvent` gets each event's type and object, and `onDone` is called once when the
   * stream ends: undefined when the server ended it or it was aborted, else the error.
   */
  async watch(
    req: WireRequest,
    onEvent: (type: unknown, object: unknown) => void,
    onDone: (err: KubeError | undefined) => void,
  ): Promise<{ abort: () => void }> {
    const { url, headers, agent, transport } = await this.prepare({ ...req, query: { watch: true, ...req.query } });
    return new Promise((resolve, reject) => {
      let ended = false;
      const end = (err: KubeError | undefined) => {
        if (ended) return;
        ended = true;
        this.open.delete(request);
        onDone(err);
      };
      const request = transport.request(url, { method: 'GET', headers, agent }, (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          readBody(res).then(
            (body) => {
              this.open.delete(request);
              reject(this.refusal(status, body.toString('utf8'), singleHeaders(res.headers)));
            },
            (err: unknown) => reject(toKubeError(err)),
          );
          return;
        }
        const { known } = req;
        const line = (bytes: Buffer) => {
          if (isBlankLine(bytes)) return;
          // As client-node's Watch: a line that is not JSON, or a handler that throws, is passed over.
          try {
            // The caller holds this version already (its own write's answer): parsing and
            // decoding it again would change nothing.
            const rv = known && peekResourceVersion(bytes);
            if (rv && known(rv)) return onEvent('BOOKMARK', { metadata: { resourceVersion: rv } });
            const event = JSON.parse(bytes.toString('utf8')) as { type?: unknown; object?: unknown };
            onEvent(event.type, event.object);
          } catch {
            // passed over
          }
        };
        const lines = lineSplitter(line);
        res.on('data', (chunk: Buffer) => lines.push(chunk));
        res.on('end', () => {
          lines.end();
          end(undefined);
        });
        res.on('error', (err) => end(toKubeError(err)));
        res.on('aborted', () => end(new KubeError(0, 'ECONNRESET', 'the watch stream was cut')));
        resolve({
          abort: () => {
            end(undefined);
            request.destroy();
          },
        });
      });
      this.open.add(request);
      // A half-open connection is noticed by TCP too, as client-node's Watch does.
      request.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
      request.on('error', (err) => {
        this.open.delete(request);
        const e = toKubeError(err);
        // Before the answer: the stream never opened. After it: the stream broke.
        reject(e);
        end(e);
      });
      request.end();
    });
  }

  /** The KubeError of an answer that is not 2xx; a 401 also drops the reused credentials. */
  private refusal(status: number, text: string, headers: Record<string, string>): KubeError {
    if (status === 401) this.connections.forget();
    return kubeErrorFromResponse(status, text, headers);
  }

  /** Destroys the requests still open and the pooled connections. */
  close(): void {
    this.closed = true;
    for (const r of this.open) r.destroy(closedError());
    this.open.clear();
    this.connections.close(closedError());
  }

  /** URL, headers (auth included), agent and body of a request, as client-node would send it. */
  private async prepare(req: WireRequest): Promise<Prepared> {
    if (this.closed) throw new KubeError(0, 'Closed', 'the cluster connection is closed');
    const { server, headers: connectionHeaders, agent, transport, pool } = await this.connections.current();
    const url = new URL(server + req.path + queryString(req.query));
    const headers: Record<string, string> = { ...connectionHeaders };
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    if (payload) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    return { url, headers, payload, agent, transport, pool };
  }
}
