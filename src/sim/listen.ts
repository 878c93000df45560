// Binding the simulator's servers: listen, fail on a bind error, and say where they serve; and
// finding a free loopback port for a child process that binds its own.
import { createServer, type AddressInfo, type Server } from 'node:net';

/** Listens on `host:port` (0 = a free port); resolves with `host:port` as a URL spells it. */
export async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return `${host.includes(':') ? `[${host}]` : host}:${bound}`;
}

/** A port free right now on 127.0.0.1 (the OS picks; a small race remains, so callers retry). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** 127.0.0.0/8, ::1 or localhost: the only addresses the unauthenticated admin port may bind. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
