// The in-cluster configuration: what a pod's service account gives kwave (a token file, the
// cluster CA, the pod's namespace, and KUBERNETES_SERVICE_HOST/PORT).
//
// Why not client-node's `loadFromCluster()` (1.4): its paths are fixed under
// /var/run/secrets/kubernetes.io/serviceaccount (its `pathPrefix` is prepended, not a replacement
// folder, so tests cannot point it elsewhere), and its token provider re-reads the file only every
// 60 s and sends it untrimmed (a file ending in a newline breaks the Authorization header).
// Here the token is read again whenever the file changes — bound service-account tokens rotate:
// the kubelet swaps the projected file long before expiry — and trimmed, as client-go does.
import { readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ExitCode, KwaveError } from '../errors.js';
import { serviceAccountDir, type InClusterEnv } from './configSource.js';

/** Overrides the service-account folder (configSource.ts). */
const SERVICE_ACCOUNT_DIR_ENV = 'KWAVE_SERVICEACCOUNT_DIR';

/** The auth-provider name of the token-file user below (its config key is `path`: client-node's own
 * file provider claims any user whose config has a `tokenFile`). */
const PROVIDER = 'kwave-service-account';

/** `https://HOST:PORT`, with an IPv6 host in brackets. Pure. */
export function inClusterServer(host: string, port: string): string {
  return `https://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
}

/** A file's identity and age: a rotated token (new file, or rewritten in place) changes it. */
function fileStamp(file: string): string {
  const s = statSync(file);
  return `${s.ino}:${s.size}:${s.mtimeMs}`;
}

/**
 * Sends the token in `file` as the bearer token; reads it again when the file changed (checked at
 * most once a second: a rotated token stays valid for a long while after the kubelet writes its
 * successor).
 */
export class TokenFileAuth {
  private token = '';
  private stamp = '';
  private checkedAt = -Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  isAuthProvider(user: { authProvider?: { name?: string } }): boolean {
    return user.authProvider?.name === PROVIDER;
  }

  async applyAuthentication(
    user: { authProvider?: { config?: Record<string, string> } },
    opts: { headers?: Record<string, unknown> },
  ): Promise<void> {
    const file = user.authProvider?.config?.path;
    if (!file) return;
    opts.headers ??= {};
    opts.headers.Authorization = `Bearer ${this.current(file)}`;
  }

  /** The token, read again if the file changed since it was last read. */
  current(file: string): string {
    const t = this.now();
    if (t - this.checkedAt < 1000 && this.token) return this.token;
    this.checkedAt = t;
    let stamp: string;
    try {
      stamp = fileStamp(file);
    } catch (err) {
      // Keep using the last token while the kubelet swaps the file; without one, say what is missing.
      if (this.token) return this.token;
      throw missing(file, err);
    }
    if (stamp !== this.stamp || !this.token) {
      this.token = readFileSync(file, 'utf8').trim();
      this.stamp = stamp;
    }
    return this.token;
  }
}

function missing(file: string, err: unknown): KwaveError {
  const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message;
  return new KwaveError(
    'KUBE',
    `in-cluster configuration: cannot read ${file}: ${why} (the pod's service-account token; ${SERVICE_ACCOUNT_DIR_ENV} overrides the folder)`,
    ExitCode.BAD_INPUT,
  );
}

/**
 * The KubeConfig of the pod's service account: server from KUBERNETES_SERVICE_HOST/PORT, the CA
 * and token from the service-account folder, the namespace file's namespace. Missing files are a
 * KwaveError (exit 2) naming them.
 */
export function loadInClusterConfig(env: InClusterEnv, auth: TokenFileAuth = new TokenFileAuth()): KubeConfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port)
    throw new KwaveError(
      'KUBE',
      'in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set',
      ExitCode.BAD_INPUT,
    );
  const dir = serviceAccountDir(env);
  const tokenFile = path.join(dir, 'token');
  const caFile = path.join(dir, 'ca.crt');
  for (const file of [tokenFile, caFile]) {
    try {
      statSync(file);
    } catch (err) {
      throw missing(file, err);
    }
  }
  let namespace: string | undefined;
  try {
    namespace = readFileSync(path.join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined; // optional: commands then default to "default"
  }
  const kc = new KubeConfig();
  kc.addAuthenticator(auth);
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server: inClusterServer(host, port), caFile, skipTLSVerify: false }],
    users: [{ name: 'service-account', authProvider: { name: PROVIDER, config: { path: tokenFile } } }],
    contexts: [
      { name: 'in-cluster', cluster: 'in-cluster', user: 'service-account', ...(namespace ? { namespace } : {}) },
    ],
    currentContext: 'in-cluster',
  });
  return kc;
}
