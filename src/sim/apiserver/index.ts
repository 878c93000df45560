// The simulated kube-apiserver: HTTPS on loopback with its own CA, bearer-token auth, and the
// resources, verbs and behaviours described in docs/sim-api.md, all over one Store.
import { listen } from '../listen.js';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:https';
import type { Faults } from '../faults.js';
import { Admission } from './admission.js';
import type { SimStats } from '../stats.js';
import type { Store } from '../store.js';
import { makeServingCerts } from './certs.js';
import { renderKubeconfig } from './kubeconfig.js';
import { ListCache } from './listCache.js';
import { ObjectOps } from './objects.js';
import { RESOURCES } from './resources.js';
import { makeHandler } from './server.js';

export interface ApiServerOptions {
  store: Store;
  stats: SimStats;
  /** Read on every request, so changing its fields switches faults at run time. */
  faults: Faults;
  /** Admission rules (refuse, hold the answer), read on every write. */
  admission?: Admission;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The bearer token clients must send; random by default. */
  token?: string;
  now?: () => Date;
  /** How often watches that allow bookmarks get one (default a minute, as the real server; and one 2 s before the timeout). */
  bookmarkIntervalMs?: number;
}

export interface ApiServer {
  /** `https://127.0.0.1:PORT` */
  url: string;
  caPem: string;
  token: string;
  /** A kubeconfig (YAML) for this server: its CA, URL and token, context `kwave-sim` by default. */
  kubeconfig(opts?: { context?: string; namespace?: string }): string;
  close(): Promise<void>;
}

/** The namespaces every cluster has from the start. */
const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const now = opts.now ?? (() => new Date());
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token ?? randomBytes(24).toString('base64url');
  const certs = await makeServingCerts(now());
  const ops = new ObjectOps(opts.store, now);
  for (const name of SYSTEM_NAMESPACES) {
    if (!opts.store.get('namespaces', undefined, name))
      ops.create(RESOURCES.namespaces, undefined, { metadata: { name } }, { dryRun: false });
  }
  const cache = new ListCache(opts.store);
  let address = '';
  const server = createServer(
    { key: certs.keyPem, cert: certs.certPem },
    makeHandler({
      store: opts.store,
      stats: opts.stats,
      faults: opts.faults,
      admission: opts.admission ?? new Admission(),
      token,
      now,
      cache,
      ops,
      serverAddress: () => address,
      bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    }),
  );
  server.keepAliveTimeout = 30_000;
  address = await listen(server, opts.port ?? 0, host);
  const url = `https://${address}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    caPem: certs.caPem,
    token,
    kubeconfig: (k = {}) => renderKubeconfig({ server: url, caPem: certs.caPem, token, ...k }),
    close() {
      closing ??= new Promise<void>((resolve) => {
        ops.close();
        cache.close();
        server.close(() => resolve());
        // Open watches and idle keep-alive connections would hold close() forever.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
