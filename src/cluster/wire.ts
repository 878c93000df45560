// Plain HTTPS to the API server for every request kwave makes: the body is parsed once with
// JSON.parse and handed back as wire JSON, for decode.ts to pick from. client-node's typed calls
// would run every pod through its ObjectSerializer and an Observable chain on top (at fleet scale
// that was most of kwave's CPU), and loading their generated API and models cost 24 MB and 0.08 s
// at every start. Connection and auth stay client-node's: each request takes its TLS options,
// headers (bearer token, exec plugins, …) and agent from KubeConfig.applyToHTTPSOptions, exactly
// as its own requests do.
//
// The requests go through undici's connection pool (the HTTP client under Node's fetch), with
// client-node's TLS options: it costs less than half the CPU of Node's https.request per
// request (a ClientRequest, an IncomingMessage and their streams each time), which at three
// writes a pod was a fifth of kwave's CPU. A proxy agent from the kubeconfig (a subclass of
// https.Agent), or keep-alive turned off, takes Node's https.request with that agent instead.
//
// One request costs no AbortController and no listener on a shared signal: the timeout is the
// pool's (headers and body; its timers tick about once a second, nothing against the default of
// 30 s) or the socket's, and closing the client destroys the requests still open.
//
// Watches too (`watch`): the stream is split into lines here and each line parsed once, instead
// of client-node's Watch (node-fetch, a PassThrough and readline per stream: a tenth of kwave's
// CPU at 1,000 pods). They stay on Node's https (a few long streams: nothing per request to save).
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { Readable } from 'node:stream';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
// The pool's module alone, not undici's index: that loads all of undici (fetch, WebSocket, caches,
// mocks), +19 MB of RSS at every start where the pool alone is +11 MB. The path is undici 7's file
// layout, not its API: the wire tests fail at import if it moves. Typed by undiciPool.d.ts.
import Pool from 'undici/lib/dispatcher/pool.js';
import { KubeError, kubeErrorFromResponse, toKubeError } from './kubeError.js';
import { kwaveVersion } from '../version.js';

export interface WireRequest {
  method: 'GET' | 'PATCH' | 'POST' | 'PUT' | 'DELETE';
  /** Path under the server URL, e.g. `/api/v1/namespaces/default/pods`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Given the first bytes of a 2xx answer's body as soon as they arrive (once per attempt), before the rest is read. */
  onHead?: (head: string) => void;
  /** An object the caller already holds at the answer's version: returned instead of parsing the answer again. */
  reuse?: (resourceVersion: string) => unknown;
  /** A watch's: a line whose object's version this says is known is handed on as a BOOKMARK of it, unparsed. */
  known?: (resourceVersion: string) => boolean;
  /** This request's time limit, exact, instead of the client's (coarse: undici's timers tick about once a second). */
  timeoutMs?: number;
}

const VERSION_KEY = Buffer.from('"resourceVersion":"');
const QUOTE = 0x22;
const NEWLINE = 0x0a;

/**
 * The object's resourceVersion in an answer or a watch line, found without decoding it: the first
 * `"resourceVersion":"` key. The API server writes metadata before the rest and resourceVersion
 * before labels and annotations; inside a string value (a last-applied annotation) the quotes are
 * escaped, so that text cannot match there. Undefined if absent or not a plain number.
 */
export function peekResourceVersion(body: Buffer): string | undefined {
  const at = body.indexOf(VERSION_KEY);
  if (at === -1) return undefined;
  const start = at + VERSION_KEY.length;
  const end = body.indexOf(QUOTE, start);
  if (end <= start) return undefined;
  for (let i = start; i < end; i++) if (body[i]! < 0x30 || body[i]! > 0x39) return undefined;
  return body.toString('latin1', start, end);
}

/**
 * Cuts a byte stream into lines (without their newline) for `onLine`; `end` hands on an unfinished
 * last one. Cut on bytes: a newline byte never occurs inside a multi-byte UTF-8 character, so each
 * line decodes whole, and no chunk is copied into a string to be searched.
 */
export function lineSplitter(onLine: (line: Buffer) => void): { push(chunk: Buffer): void; end(): void } {
  let pending: Buffer[] = [];
  return {
    push(chunk) {
      let start = 0;
      for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
        const piece = chunk.subarray(start, nl);
        if (pending.length === 0) onLine(piece);
        else {
          onLine(Buffer.concat([...pending, piece]));
          pending = [];
        }
        start = nl + 1;
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    },
    end() {
      if (pending.length) onLine(Buffer.concat(pending));
      pending = [];
    },
  };
}

/** Whether a line holds only JSON whitespace (the server may send blank lines). */
function blank(line: Buffer): boolean {
  for (const b of line) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== NEWLINE) return false;
  return true;
}

/** How much of an answer's first chunk `onHead` sees. */
const HEAD_BYTES = 1024;

export interface WireOptions {
  timeoutMs: number;
  /** Reuse one keep-alive agent (client-node makes a new one per request). */
  keepAlive: boolean;
  /**
   * At most this many pooled connections (default: as many as requests at once). undici's pool
   * opens a new connection for a request sent in the same turn as another's answer ended, before
   * that connection counts as free again: with 128 requests at the server, a 10,000-pod run held
   * ~250 connections, each a TLS session in both processes.
   */
  connections?: number;
}

/** `?a=1&b=x` from the defined entries, in the given order. Pure. */
function queryString(query: WireRequest['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

/**
 * What kwave's requests name themselves, as client-go's do (`kubectl/v1.32.0 (linux/amd64) …`):
 * kube-apiserver records a write's field manager as the part before the first `/`, so kwave's
 * patches show under `kwave` in a pod's managedFields (without it, `unknown`), and the audit log
 * names it. A header of the kubeconfig's (applyToHTTPSOptions) wins.
 */
const userAgent = () => `kwave/${kwaveVersion()} (${process.platform}/${process.arch})`;

/**
 * How long an idle pooled connection is kept, when the server does not say (a `Keep-Alive:
 * timeout=` hint, as Node's servers send, wins). kube-apiserver sends none and closes idle
 * connections after 90 s, as client-go's transport does; undici's own default, 4 s, closed them
 * in every lull of a rollout: a 2,000-pod run against the real control plane opened 294 TLS
 * connections, each a full handshake on both sides (bench/README.md).
 */
const IDLE_CONNECTION_MS = 60_000;

/** How long one answer of applyToHTTPSOptions is reused (see `connection`). */
const CONNECTION_REUSE_MS = 1000;

interface Connection {
  server: string;
  headers: Readonly<Record<string, string>>;
  agent: http.Agent | undefined;
  transport: typeof http | typeof https;
  /** The undici pool requests take, unless a proxy agent or keep-alive off sends them through `agent`. */
  pool: Pool | undefined;
}

/** A whole answer: status, headers and body, not yet decoded. */
interface Answer {
  status: number;
  /** Single-valued headers, made only for a refusal: a 2xx answer's are never looked at. */
  headers: () => Record<string, string>;
  body: Buffer;
}

/** The TLS options client-node gives its agent (KubeConfig.applyToHTTPSOptions), for undici's tls.connect. */
const TLS_OPTIONS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'rejectUnauthorized',
  'servername',
  'ciphers',
  'honorCipherOrder',
  'ecdhCurve',
  'clientCertEngine',
  'crl',
  'dhparam',
  'secureOptions',
  'secureProtocol',
  'sessionIdContext',
] as const;

const isSuccess = (status: number) => status >= 200 && status < 300;

const closedError = () => new KubeError(0, 'Closed', 'the cluster connection was closed');

/**
 * A body's bytes, whole; `onHead` (a 2xx answer's, WireRequest.onHead) is given the first bytes
 * of its first chunk as soon as they arrive. For Node's answers and undici's bodies alike.
 */
function readBody(body: Readable, onHead?: (head: string) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on('data', (d: Buffer) => {
      if (chunks.length === 0) onHead?.(d.toString('latin1', 0, Math.min(d.length, HEAD_BYTES)));
      chunks.push(d);
    });
    body.on('end', () => resolve(Buffer.concat(chunks)));
    body.on('error', reject);
  });
}

/** undici's timeouts and its own closing, as the KubeErrors the retries know. */
function undiciFailure(err: unknown, req: WireRequest, timeoutMs: number): KubeError {
  const { code, name } = (err ?? {}) as { code?: unknown; name?: unknown };
  if (
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    name === 'TimeoutError'
  ) {
    return new KubeError(0, 'Timeout', `no answer to ${req.method} ${req.path} within ${timeoutMs} ms`);
  }
  if (code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_CLOSED') return closedError();
  return toKubeError(err);
}

/** String-valued headers only (repeated ones, as arrays, are not read here). */
function singleHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** undici's raw headers (name, value, name, value…) as single-valued headers, lower-case names; repeated ones are not read, as in singleHeaders. */
export function rawHeaderRecord(raw: Buffer[]): Record<string, string> {
  const out: Record<string, string> = {};
  const repeated = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    if (name in out) repeated.add(name);
    out[name] = raw[i + 1]!.toString('latin1');
  }
  for (const name of repeated) delete out[name];
  return out;
}

/** A request made ready to send: URL, headers with auth, body, and what carries it. */
interface Prepared extends Pick<Connection, 'agent' | 'transport' | 'pool'> {
  url: URL;
  headers: Record<string, string>;
  payload: Buffer | undefined;
}

export class WireClient {
  private sharedAgent?: https.Agent;
  private pool?: Pool;
  private cached?: { at: number; connection: Connection };
  private readonly open = new Set<http.ClientRequest>();
  private closed = false;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly options: WireOptions,
  ) {}

  /** Sends one request; resolves with the parsed JSON body of a 2xx answer, else throws KubeError. */
  async send(req: WireRequest): Promise<unknown> {
    const prepared = await this.prepare(req);
    const answer = prepared.pool
      ? await this.exchangePooled(req, prepared.pool, prepared)
      : await this.exchangeNode(req, prepared);
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
   * One request and its whole answer through the undici pool, by `dispatch` and a handler of its
   * callbacks: `pool.request` would wrap each answer in a body stream, an async resource and
   * their promises (a fifth of a request's client CPU, measured with 500 PATCHes in flight).
   * undici 7's Pool takes the callbacks its core calls (onConnect, onHeaders, onData,
   * onComplete, onError), which its types mark deprecated in favour of a controller API that
   * Pool.dispatch refuses unwrapped.
   */
  private exchangePooled(req: WireRequest, pool: Pool, { url, headers, payload }: Prepared): Promise<Answer> {
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
    return new Promise<Answer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      let raw: Buffer[] = [];
      let settled = false;
      let abort: ((err: Error) => void) | undefined;
      // An exact limit, from now: only the few requests that ask for one (the lease's).
      let timedOut: KubeError | undefined;
      const timer =
        req.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              timedOut = new KubeError(0, 'Timeout', `no answer to ${req.method} ${req.path} within ${timeoutMs} ms`);
              abort?.(timedOut);
              fail(timedOut);
            }, req.timeoutMs);
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(undiciFailure(err, req, timeoutMs));
      };
      const handler: Dispatcher.DispatchHandler = {
        onConnect: (abortRequest) => {
          abort = abortRequest;
          if (timedOut) abortRequest(timedOut);
        },
        onHeaders: (statusCode, rawHeaders) => {
          status = statusCode;
          raw = rawHeaders;
          return true;
        },
        onData: (chunk) => {
          if (chunks.length === 0 && isSuccess(status))
            req.onHead?.(chunk.toString('latin1', 0, Math.min(chunk.length, HEAD_BYTES)));
          chunks.push(chunk);
          return true;
        },
        onComplete: () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({
            status,
            headers: () => rawHeaderRecord(raw),
            body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
          });
        },
        onError: fail,
      };
      try {
        pool.dispatch(
          {
            path: url.pathname + url.search,
            method: req.method,
            headers,
            body: payload,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          },
          handler,
        );
      } catch (err) {
        fail(err);
      }
    });
  }

  /** One request and its whole answer through Node's http(s).request with the connection's agent. */
  private exchangeNode(req: WireRequest, { url, headers, payload, agent, transport }: Prepared): Promise<Answer> {
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
    return new Promise<Answer>((resolve, reject) => {
      const request = transport.request(url, { method: req.method, headers, agent, timeout: timeoutMs }, (res) => {
        const status = res.statusCode ?? 0;
        readBody(res, isSuccess(status) ? req.onHead : undefined).then(
          (body) => {
            this.open.delete(request);
            resolve({ status, headers: () => singleHeaders(res.headers), body });
          },
          (err: unknown) => reject(toKubeError(err)),
        );
      });
      this.open.add(request);
      request.on('timeout', () =>
        request.destroy(new KubeError(0, 'Timeout', `no answer to ${req.method} ${req.path} within ${timeoutMs} ms`)),
      );
      request.on('error', (err) => {
        this.open.delete(request);
        reject(toKubeError(err));
      });
      request.end(payload);
    });
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
          if (blank(bytes)) return;
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

  /** The KubeError of an answer that is not 2xx; a 401 also drops the reused credentials (`connection`). */
  private refusal(status: number, text: string, headers: Record<string, string>): KubeError {
    if (status === 401) this.cached = undefined;
    return kubeErrorFromResponse(status, text, headers);
  }

  /** Destroys the requests still open and the pooled connections. */
  close(): void {
    this.closed = true;
    for (const r of this.open) r.destroy(closedError());
    this.open.clear();
    this.sharedAgent?.destroy();
    void this.pool?.destroy(closedError());
  }

  /** URL, headers (auth included), agent and body of a request, as client-node would send it. */
  private async prepare(req: WireRequest): Promise<Prepared> {
    if (this.closed) throw new KubeError(0, 'Closed', 'the cluster connection is closed');
    const { server, headers: connectionHeaders, agent, transport, pool } = await this.connection();
    const url = new URL(server + req.path + queryString(req.query));
    const headers: Record<string, string> = { ...connectionHeaders };
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    if (payload) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    return { url, headers, payload, agent, transport, pool };
  }

  /**
   * The server, auth headers and agent, from client-node's applyToHTTPSOptions, reused for
   * CONNECTION_REUSE_MS: it reads the CA, certificate and key (files or base64) and builds an
   * agent on every call — a second of CPU at 10,000 pods, for the same answer each time. A token
   * that rotates (a file, an exec plugin) is picked up within that time; an Unauthorized answer
   * drops the cached one at once.
   */
  private async connection(): Promise<Connection> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < CONNECTION_REUSE_MS) return this.cached.connection;
    const server = this.kubeConfig.getCurrentCluster()?.server;
    if (!server) throw new KubeError(0, 'ConnectionError', 'no current cluster in the kubeconfig');
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': userAgent() };
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    const agent = this.agentFor(opts.agent);
    const base = server.replace(/\/+$/, '');
    const connection: Connection = {
      server: base,
      headers,
      agent,
      transport: server.startsWith('http:') ? http : https,
      pool: this.poolFor(base, opts.agent),
    };
    this.cached = { at: now, connection };
    return connection;
  }

  /**
   * The undici pool for the server, with the TLS options of client-node's agent (made once, as the
   * shared agent is); none with keep-alive off or a proxy agent (a subclass) in play.
   */
  private poolFor(server: string, agent: http.Agent | boolean | undefined): Pool | undefined {
    if (!this.options.keepAlive) return undefined;
    if (agent instanceof http.Agent && agent.constructor !== https.Agent && agent.constructor !== http.Agent)
      return undefined;
    if (!this.pool) {
      const options: Record<string, unknown> = {};
      const given = agent instanceof https.Agent ? agent.options : {};
      for (const k of TLS_OPTIONS) if (given[k] !== undefined) options[k] = given[k];
      // One context for every connection: given the PEMs, tls.connect would parse them anew each time.
      const connect = server.startsWith('https:')
        ? { ...options, secureContext: tls.createSecureContext(options as tls.SecureContextOptions) }
        : options;
      this.pool = new Pool(new URL(server).origin, {
        connect,
        keepAliveTimeout: IDLE_CONNECTION_MS,
        ...(this.options.connections === undefined ? {} : { connections: this.options.connections }),
      });
    }
    return this.pool;
  }

  /** The pooled keep-alive agent with client-node's TLS options, unless a proxy agent (a subclass) is in play. */
  private agentFor(agent: http.Agent | boolean | undefined): http.Agent | undefined {
    if (!(agent instanceof http.Agent)) return undefined;
    if (!this.options.keepAlive || agent.constructor !== https.Agent) return agent;
    this.sharedAgent ??= new https.Agent({ ...(agent as https.Agent).options, keepAlive: true });
    return this.sharedAgent;
  }
}
