// One request and its whole answer (status, headers, body), through undici's pool or Node's
// http(s).request; what goes wrong on the way becomes the KubeErrors the retries know.
//
// The undici pool (the HTTP client under Node's fetch), with client-node's TLS options, costs
// less than half the CPU of Node's https.request per request (a ClientRequest, an IncomingMessage
// and their streams each time), which at three writes a pod would be a fifth of kwave's CPU. A proxy
// agent from the kubeconfig (a subclass of https.Agent), or keep-alive turned off, takes Node's
// https.request with that agent instead.
//
// One request costs no AbortController and no listener on a shared signal: the timeout is the
// pool's (headers and body; its timers tick about once a second, nothing against the default of
// 30 s) or the socket's, and closing the client destroys the requests still open.
import type http from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type Pool from 'undici/lib/dispatcher/pool.js';
import { KubeError, toKubeError } from './kubeError.js';
import type { Connection } from './wireConnection.js';
import type { WireRequest } from './wireRequest.js';

/** How much of an answer's first chunk `onHead` sees. */
const HEAD_BYTES = 1024;

/** A whole answer: status, headers and body, not yet decoded. */
export interface Answer {
  status: number;
  /** Single-valued headers, made only for a refusal: a 2xx answer's are never looked at. */
  headers: () => Record<string, string>;
  body: Buffer;
}

/** A request made ready to send: URL, headers with auth, body, and what carries it. */
export interface Prepared extends Pick<Connection, 'agent' | 'transport' | 'pool'> {
  url: URL;
  headers: Record<string, string>;
  payload: Buffer | undefined;
}

export const isSuccess = (status: number) => status >= 200 && status < 300;

export const closedError = () => new KubeError(0, 'Closed', 'the cluster connection was closed');

/**
 * A body's bytes, whole; `onHead` (a 2xx answer's, WireRequest.onHead) is given the first bytes
 * of its first chunk as soon as they arrive. For Node's answers and undici's bodies alike.
 */
export function readBody(body: Readable, onHead?: (head: string) => void): Promise<Buffer> {
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
export function singleHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * undici's raw headers (name, value, name, value…) as single-valued headers, lower-case names;
 * repeated ones are not read, as in singleHeaders.
 */
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

/**
 * One request and its whole answer through the undici pool, by `dispatch` and a handler of its
 * callbacks: `pool.request` would wrap each answer in a body stream, an async resource and
 * their promises (a fifth of a request's client CPU, measured with 500 PATCHes in flight).
 * undici 7's Pool takes the callbacks its core calls (onConnect, onHeaders, onData,
 * onComplete, onError), which its types mark deprecated in favour of a controller API that
 * Pool.dispatch refuses unwrapped. `defaultTimeoutMs` is the client's, unless the request has its own.
 */
export function exchangePooled(
  req: WireRequest,
  pool: Pool,
  { url, headers, payload }: Prepared,
  defaultTimeoutMs: number,
): Promise<Answer> {
  const timeoutMs = req.timeoutMs ?? defaultTimeoutMs;
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

/**
 * One request and its whole answer through Node's http(s).request with the connection's agent;
 * the request is in `open` until its answer is read, for the client's close to destroy it.
 */
export function exchangeNode(
  req: WireRequest,
  { url, headers, payload, agent, transport }: Prepared,
  defaultTimeoutMs: number,
  open: Set<http.ClientRequest>,
): Promise<Answer> {
  const timeoutMs = req.timeoutMs ?? defaultTimeoutMs;
  return new Promise<Answer>((resolve, reject) => {
    const request = transport.request(url, { method: req.method, headers, agent, timeout: timeoutMs }, (res) => {
      const status = res.statusCode ?? 0;
      readBody(res, isSuccess(status) ? req.onHead : undefined).then(
        (body) => {
          open.delete(request);
          resolve({ status, headers: () => singleHeaders(res.headers), body });
        },
        (err: unknown) => reject(toKubeError(err)),
      );
    });
    open.add(request);
    request.on('timeout', () =>
      request.destroy(new KubeError(0, 'Timeout', `no answer to ${req.method} ${req.path} within ${timeoutMs} ms`)),
    );
    request.on('error', (err) => {
      open.delete(request);
      reject(toKubeError(err));
    });
    request.end(payload);
  });
}
