// A loopback HTTP receiver for notifications and webhooks: records every request (path, headers,
// body) and answers as its mode says: `ok` (204), `fail` (500), `hang` (never answers, so the
// sender's timeout fires), or a function for anything else.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Received {
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

export type ReceiverMode = 'ok' | 'fail' | 'hang' | ((req: IncomingMessage, res: ServerResponse, n: number) => void);

export interface Receiver {
  url: string;
  received: Received[];
  /** Bodies received, parsed as JSON. */
  bodies(): unknown[];
  /** Resolves once `count` requests arrived (bounded by `timeoutMs`, then rejects with what came). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(mode: ReceiverMode = 'ok'): Promise<Receiver> {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body,
      });
      for (const w of waiters) w();
      if (mode === 'ok') res.writeHead(204).end();
      else if (mode === 'fail')
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`broken; you sent ${JSON.stringify(req.headers)}`);
      else if (mode === 'hang') return;
      else mode(req, res, received.length);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    bodies: () => received.map((r) => JSON.parse(r.body) as unknown),
    waitFor: (count, timeoutMs = 180_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (received.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `the receiver got ${received.length} of ${count} requests: ${received.map((r) => r.body.slice(0, 120)).join(' | ')}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
