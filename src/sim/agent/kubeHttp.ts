// The node agent's HTTP client to an API server: JSON requests and watch streams over HTTPS with
// one keep-alive agent (the pattern of src/cluster), a bearer token and the server's CA. Errors
// come back as KubeHttpError with the HTTP code and the server's Status object.
import https from 'node:https';

export interface KubeHttpOptions {
  /** `https://host:port` */
  url: string;
  caPem: string;
  token: string;
  userAgent?: string;
  /** Sockets at most (watches hold one each). Default 32. */
  maxSockets?: number;
}

export class KubeHttpError extends Error {
  override name = 'KubeHttpError';
  constructor(
    readonly code: number,
    readonly status: { reason?: string; message?: string } | undefined,
    what: string,
  ) {
    super(`${what}: ${code} ${status?.reason ?? ''} ${status?.message ?? ''}`.trim());
  }
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchHandle {
  /** Resolves when the stream ends (cleanly or not); rejects on a connection error or a non-200 answer. */
  done: Promise<void>;
  abort(): void;
}

export class KubeHttp {
  private readonly agent: https.Agent;
  private readonly base: URL;

  constructor(private readonly options: KubeHttpOptions) {
    this.base = new URL(options.url);
    this.agent = new https.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 32, ca: options.caPem });
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return {
      Authorization: `Bearer ${this.options.token}`,
      Accept: 'application/json',
      'User-Agent': this.options.userAgent ?? 'kwave-node-agent',
      ...extra,
    };
  }

  /** One request; resolves with the parsed JSON body of a 2xx answer. */
  request<T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers = this.headers(
      payload ? { 'Content-Type': contentType, 'Content-Length': String(payload.length) } : {},
    );
    return new Promise<T>((resolve, reject) => {
      const req = https.request(
        {
          protocol: 'https:',
          hostname: this.base.hostname,
          port: this.base.port,
          path,
          method,
          headers,
          agent: this.agent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = { message: text.slice(0, 200) };
            }
            const code = res.statusCode ?? 0;
            if (code >= 200 && code < 300) resolve(parsed as T);
            else reject(new KubeHttpError(code, parsed as KubeHttpError['status'], `${method} ${path.split('?')[0]}`));
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Opens a watch (`path` with `watch=true` in its query) and calls `onEvent` per line. */
  watch(path: string, onEvent: (type: WatchEventType, object: Record<string, unknown>) => void): WatchHandle {
    let req: ReturnType<typeof https.request> | undefined;
    let aborted = false;
    const done = new Promise<void>((resolve, reject) => {
      req = https.request(
        {
          protocol: 'https:',
          hostname: this.base.hostname,
          port: this.base.port,
          path,
          method: 'GET',
          headers: this.headers({}),
          agent: this.agent,
        },
        (res) => {
          if (res.statusCode !== 200) {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              let status: KubeHttpError['status'];
              try {
                status = JSON.parse(Buffer.concat(chunks).toString('utf8')) as KubeHttpError['status'];
              } catch {
                status = undefined;
              }
              reject(new KubeHttpError(res.statusCode ?? 0, status, `watch ${path.split('?')[0]}`));
            });
            return;
          }
          res.setEncoding('utf8');
          let partial = '';
          res.on('data', (chunk: string) => {
            const lines = (partial + chunk).split('\n');
            partial = lines.pop() ?? '';
            for (const line of lines) {
              if (!line.trim()) continue;
              let e: { type: WatchEventType; object: Record<string, unknown> };
              try {
                e = JSON.parse(line) as typeof e;
              } catch {
                continue; // a torn line of a cut stream: the relist repairs what it carried
              }
              onEvent(e.type, e.object);
            }
          });
          res.on('end', () => resolve());
          res.on('error', (err) => (aborted ? resolve() : reject(err)));
          res.on('aborted', () => resolve());
        },
      );
      req.on('error', (err) => (aborted ? resolve() : reject(err)));
      req.end();
    });
    return {
      done,
      abort: () => {
        aborted = true;
        req?.destroy();
      },
    };
  }

  close(): void {
    this.agent.destroy();
  }
}

/** `a` is newer than `b` (resourceVersions are etcd revisions: integers, compared as such). */
export function newerVersion(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined) return false;
  if (b === undefined) return true;
  try {
    return BigInt(a) > BigInt(b);
  } catch {
    return a !== b;
  }
}
