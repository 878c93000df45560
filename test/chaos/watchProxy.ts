// A fault proxy in front of an API server, for the chaos suite on the real control plane: it
// serves HTTPS with a certificate the client's kubeconfig trusts (on the real control plane,
// kube-apiserver's own serving certificate), forwards every request to the API server as it came,
// and passes every answer back byte for byte. Its faults touch only watch streams (`watch=true`)
// and only their timing: a slow watch (every chunk of a watch held back `delay` ms, in order) and
// a cut (every open watch stream ended mid-way, chunks still held back lost with it, as a dropped
// connection loses them). Requests that are not watches are never held back.
//
// A failure to reach the API server (kube-apiserver restarting) ends the client's connection
// without an answer, as the API server's own going away would: the proxy adds no status of its own.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

export interface WatchProxy {
  /** `https://127.0.0.1:PORT` */
  url: string;
  /** Holds back every watch chunk from now on for `ms` (0: deliver at once, once those held already went). */
  setWatchDelay(ms: number): void;
  /** Ends every watch stream open now; returns how many. */
  cutWatches(): number;
  /** What the faults did: watch streams opened, chunks held back, streams cut. */
  stats: { watches: number; delayedChunks: number; cuts: number };
  close(): Promise<void>;
}

export interface WatchProxyOptions {
  /** The API server, e.g. `https://127.0.0.1:6443`, and the CA that signed its certificate. */
  upstream: string;
  upstreamCaPem: string;
  /** The proxy's own serving certificate and key (PEM), for the names the client connects to. */
  certPem: string;
  keyPem: string;
}

/** Hop-by-hop headers: about one connection, never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']);

function endToEnd(raw: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2)
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) kept.push(raw[i]!, raw[i + 1]!);
  return kept;
}

export function isWatch(path: string): boolean {
  const watch = new URL(path, 'http://x').searchParams.get('watch');
  return watch === 'true' || watch === '1';
}

/**
 * Chunks released in the order they came, each no earlier than `delay` after it came: a delay
 * lowered (or ended) meanwhile never lets a later chunk overtake an earlier one.
 */
export class HeldChunks {
  private readonly queue: { due: number; chunk: Buffer }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deliver: (chunk: Buffer) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Returns whether the chunk was held back. */
  push(chunk: Buffer, delayMs: number): boolean {
    if (delayMs <= 0 && this.queue.length === 0) {
      this.deliver(chunk);
      return false;
    }
    this.queue.push({ due: this.now() + Math.max(0, delayMs), chunk });
    this.timer ??= setTimeout(() => this.release(), Math.max(0, this.queue[0]!.due - this.now()));
    return true;
  }

  /** Nothing held back now. */
  get empty(): boolean {
    return this.queue.length === 0;
  }

  private release(): void {
    this.timer = undefined;
    while (this.queue.length > 0 && this.queue[0]!.due <= this.now()) this.deliver(this.queue.shift()!.chunk);
    if (this.queue.length > 0)
      this.timer = setTimeout(() => this.release(), Math.max(0, this.queue[0]!.due - this.now()));
  }

  /** Drops what is held (the stream was cut). */
  drop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
  }
}

export async function startWatchProxy(options: WatchProxyOptions): Promise<WatchProxy> {
  const target = new URL(options.upstream);
  const agent = new https.Agent({ keepAlive: true, ca: options.upstreamCaPem });
  let delayMs = 0;
  const stats = { watches: 0, delayedChunks: 0, cuts: 0 };
  /** Open watch streams: ending one cuts it. */
  const watches = new Set<() => void>();
  const sockets = new Set<Duplex>();

  const server = https.createServer({ cert: options.certPem, key: options.keyPem }, (req, res) => {
    const path = req.url ?? '/';
    const watch = isWatch(path);
    const upstream = https.request({
      agent,
      host: target.hostname,
      port: target.port,
      method: req.method,
      path,
      headers: endToEnd(req.rawHeaders),
    });
    // No answer from the API server: the client's connection ends without one.
    const abandon = () => {
      upstream.destroy();
      res.destroy();
    };
    upstream.on('error', abandon);
    req.on('error', abandon);
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
    upstream.on('response', (answer) => {
      // Ended before its end (the API server went away): so does the client's connection.
      answer.on('close', () => answer.complete || abandon());
      answer.on('error', abandon);
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.rawHeaders));
      if (!watch) {
        answer.pipe(res);
        return;
      }
      stats.watches++;
      res.flushHeaders();
      res.socket?.setNoDelay(true);
      let ended = false;
      const held = new HeldChunks((chunk) => {
        res.write(chunk);
        if (ended && held.empty) res.end();
      });
      const cut = () => {
        stats.cuts++;
        held.drop();
        abandon();
      };
      watches.add(cut);
      res.on('close', () => {
        watches.delete(cut);
        held.drop();
      });
      answer.on('data', (chunk: Buffer) => {
        if (held.push(chunk, delayMs)) stats.delayedChunks++;
      });
      answer.on('end', () => {
        ended = true;
        if (held.empty) res.end();
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A client that goes away mid-handshake is no fault of the proxy's.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    setWatchDelay: (ms) => {
      delayMs = ms;
    },
    cutWatches: () => {
      const open = [...watches];
      for (const cut of open) cut();
      return open.length;
    },
    stats,
    close: async () => {
      for (const cut of [...watches]) cut();
      for (const s of sockets) s.destroy();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
