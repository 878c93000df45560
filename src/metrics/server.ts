// The /metrics and /healthz HTTP server. Its close() lingers until Prometheus has scraped the
// final state once (or a time limit passes), so a run shorter than a scrape interval still shows up.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExitCode, KwaveError } from '../errors.js';
import { formatHostPort, type ListenAddress } from './address.js';

/** What the server serves: a KwaveMetrics fits. */
export interface MetricsSource {
  exposition(): Promise<string>;
  readonly contentType: string;
}

interface CloseOptions {
  /** Longest wait for a final scrape, in ms (default 10 000; 0 closes at once). */
  lingerMs?: number;
  /** Stops the wait early (a second Ctrl-C, say). */
  signal?: AbortSignal;
}

/** How close() ended: whether a scrape after close() was served before the server went down. */
interface CloseResult {
  finalScrape: boolean;
  waitedMs: number;
}

export interface MetricsServer {
  /** The bound host and port (the real port when 0 was asked for). */
  readonly host: string;
  readonly port: number;
  /** e.g. `http://127.0.0.1:9464/metrics` */
  readonly url: string;
  /** Scrapes of /metrics served so far. */
  readonly scrapes: number;
  close(options?: CloseOptions): Promise<CloseResult>;
}

const DEFAULT_LINGER_MS = 10_000;

/** Starts serving; rejects with a USAGE KwaveError when the address cannot be bound. */
export async function startMetricsServer(source: MetricsSource, address: ListenAddress): Promise<MetricsServer> {
  let scrapes = 0;
  // Set by close(): resolves once a scrape that began after close() has been answered.
  let onFinalScrape: (() => void) | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok\n');
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found: try /metrics or /healthz\n');
      return;
    }
    const waiting = onFinalScrape;
    try {
      const body = await source.exposition();
      res.writeHead(200, { 'Content-Type': source.contentType });
      res.end(req.method === 'HEAD' ? undefined : body, () => {
        scrapes++;
        waiting?.();
      });
    } catch (err) {
      res
        .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end(`collecting metrics failed: ${String(err)}\n`);
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  // Scrapers keep connections alive; without this, close() would wait for them to time out.
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const where = formatHostPort(address.host ?? '0.0.0.0', address.port);
      const why =
        err.code === 'EADDRINUSE'
          ? 'is in use'
          : err.code === 'EADDRNOTAVAIL'
            ? 'is not an address of this machine'
            : err.code === 'EACCES'
              ? 'needs privileges'
              : `cannot be bound (${err.message})`;
      reject(
        new KwaveError(
          'USAGE',
          `metrics address ${where} ${why}; pass --metrics-address HOST:PORT (port 0 picks a free one) or off`,
          ExitCode.BAD_INPUT,
        ),
      );
    };
    server.once('error', onError);
    server.listen(address.port, address.host, () => {
      server.off('error', onError);
      resolve();
    });
  });

  const bound = server.address() as AddressInfo;
  const host = bound.address;
  let closing: Promise<CloseResult> | undefined;

  return {
    host,
    port: bound.port,
    url: `http://${formatHostPort(host === '::' || host === '0.0.0.0' ? '127.0.0.1' : host, bound.port)}/metrics`,
    get scrapes() {
      return scrapes;
    },
    close(options: CloseOptions = {}) {
      closing ??= (async () => {
        const lingerMs = options.lingerMs ?? DEFAULT_LINGER_MS;
        const started = Date.now();
        const finalScrape = await new Promise<boolean>((resolve) => {
          if (lingerMs <= 0 || options.signal?.aborted) return resolve(false);
          const timer = setTimeout(() => done(false), lingerMs);
          const onAbort = () => done(false);
          function done(scraped: boolean) {
            clearTimeout(timer);
            options.signal?.removeEventListener('abort', onAbort);
            onFinalScrape = undefined;
            resolve(scraped);
          }
          options.signal?.addEventListener('abort', onAbort, { once: true });
          onFinalScrape = () => done(true);
        });
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        return { finalScrape, waitedMs: Date.now() - started };
      })();
      return closing;
    },
  };
}
