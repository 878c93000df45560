// Where and how requests go for the kubeconfig's current context: the server, the auth headers,
// and what carries them (undici's pool, or Node's https with client-node's agent), reused briefly.
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node';
// The pool's module alone, not undici's index: that loads all of undici (fetch, WebSocket, caches,
// mocks), +19 MB of RSS at every start where the pool alone is +11 MB. The path is undici 7's file
// layout, not its API: the wire tests fail at import if it moves. Typed by undiciPool.d.ts.
import Pool from 'undici/lib/dispatcher/pool.js';
import { KubeError } from './kubeError.js';
import { kwaveVersion } from '../version.js';

export interface Connection {
  server: string;
  headers: Readonly<Record<string, string>>;
  agent: http.Agent | undefined;
  transport: typeof http | typeof https;
  /** The undici pool requests take, unless a proxy agent or keep-alive off sends them through `agent`. */
  pool: Pool | undefined;
}

export interface ConnectionOptions {
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
 * connections with it, each a full handshake on both sides, against 135 with this.
 */
const IDLE_CONNECTION_MS = 60_000;

/** How long one answer of applyToHTTPSOptions is reused (see `current`). */
const CONNECTION_REUSE_MS = 1000;

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

export class ConnectionCache {
  private sharedAgent?: https.Agent;
  private pool?: Pool;
  private cached?: { at: number; connection: Connection };

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly options: ConnectionOptions,
  ) {}

  /**
   * The server, auth headers and agent, from client-node's applyToHTTPSOptions, reused for
   * CONNECTION_REUSE_MS: it reads the CA, certificate and key (files or base64) and builds an
   * agent on every call — a second of CPU at 10,000 pods, for the same answer each time. A token
   * that rotates (a file, an exec plugin) is picked up within that time; an Unauthorized answer
   * drops the cached one at once (`forget`).
   */
  async current(): Promise<Connection> {
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

  /** Drops the reused credentials: the next request asks applyToHTTPSOptions again. */
  forget(): void {
    this.cached = undefined;
  }

  /** Destroys the pooled connections, failing what is still open on them with `reason`. */
  close(reason: Error): void {
    this.sharedAgent?.destroy();
    void this.pool?.destroy(reason);
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
