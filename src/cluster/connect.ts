// Finding the cluster: which kubeconfig (the --kubeconfig flag, $KUBECONFIG, ~/.kube/config, or
// the in-cluster service account), which context, and a clear error (exit 2) when there is none.
// The choice of source is pure (configSource.ts); loading it is the thin shell around.
import { KubeConfig } from '@kubernetes/client-node';
import { ExitCode, KwaveError } from '../errors.js';
import { Cluster } from './cluster.js';
import type { ClusterOptions } from './clusterOptions.js';
import { configSourceOf, type ConfigSource, type InClusterEnv } from './configSource.js';
import { loadInClusterConfig } from './inCluster.js';
import { credentialsOverHttp } from './plainHttp.js';

function badInput(message: string): KwaveError {
  return new KwaveError('KUBE', message, ExitCode.BAD_INPUT);
}

function describeSource(source: ConfigSource): string {
  if (source.kind === 'files') return source.paths.join(', ');
  return source.kind === 'in-cluster' ? `the in-cluster service account (${source.dir})` : 'no kubeconfig';
}

/** Loads the chosen source into a KubeConfig; a missing or unreadable file is a KwaveError (exit 2). */
function loadKubeConfig(source: ConfigSource, env: InClusterEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  if (source.kind === 'none') {
    throw badInput(
      `no Kubernetes configuration found: tried ${source.tried.join('; ')}. Pass --kubeconfig FILE or set KUBECONFIG.`,
    );
  }
  if (source.kind === 'in-cluster') return loadInClusterConfig(env);
  source.paths.forEach((file, i) => {
    const next = new KubeConfig();
    try {
      next.loadFromFile(file);
    } catch (err) {
      throw badInput(`cannot read kubeconfig ${file}: ${kubeconfigProblem(err)}`);
    }
    // $KUBECONFIG merge rule: the first file to define a name wins, and the first non-empty
    // current-context wins.
    if (i === 0)
      kc.loadFromOptions({
        clusters: next.clusters,
        users: next.users,
        contexts: next.contexts,
        currentContext: next.currentContext,
      });
    else kc.mergeConfig(filterNew(kc, next), Boolean(kc.currentContext));
  });
  return kc;
}

/**
 * Why a kubeconfig could not be read, without quoting it: the YAML parser's message shows the
 * lines around the error, and those may hold a token or a client key.
 */
function kubeconfigProblem(err: unknown): string {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'file not found';
  const { reason, mark } = err as { reason?: unknown; mark?: { line?: unknown; column?: unknown } };
  if (typeof reason === 'string' && typeof mark?.line === 'number' && typeof mark.column === 'number')
    return `invalid YAML at line ${mark.line + 1}, column ${mark.column + 1}: ${reason} (the lines are not shown: a kubeconfig holds credentials)`;
  const first = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
  return first.length > 200 ? `${first.slice(0, 200)}…` : first;
}

/** The entries of `next` whose names `kc` does not define yet (mergeConfig throws on duplicates). */
function filterNew(kc: KubeConfig, next: KubeConfig): KubeConfig {
  const out = new KubeConfig();
  out.loadFromOptions({
    clusters: next.clusters.filter((c) => !kc.getCluster(c.name)),
    users: next.users.filter((u) => !kc.getUser(u.name)),
    contexts: next.contexts.filter((c) => !kc.getContextObject(c.name)),
    currentContext: next.currentContext,
  });
  return out;
}

/**
 * Selects `context` (or keeps the current one) and checks that it names a cluster and a user.
 * Returns the namespace the context sets, or 'default'.
 */
function selectContext(kc: KubeConfig, context: string | undefined, where: string): string {
  const names = kc.getContexts().map((c) => c.name);
  const available = names.length > 0 ? `available: ${names.join(', ')}` : 'it defines no contexts';
  if (context !== undefined) {
    if (!kc.getContextObject(context)) throw badInput(`context "${context}" not found in ${where} (${available})`);
    kc.setCurrentContext(context);
  } else if (!kc.getCurrentContext() || !kc.getContextObject(kc.getCurrentContext())) {
    const current = kc.getCurrentContext();
    throw badInput(
      current
        ? `current-context "${current}" of ${where} does not exist (${available}); pass --context NAME`
        : `${where} sets no current-context (${available}); pass --context NAME`,
    );
  }
  const ctx = kc.getContextObject(kc.getCurrentContext())!;
  if (!kc.getCurrentCluster())
    throw badInput(`context "${ctx.name}" in ${where} refers to cluster "${ctx.cluster}", which is not defined`);
  if (!kc.getCurrentUser() && ctx.user)
    throw badInput(`context "${ctx.name}" in ${where} refers to user "${ctx.user}", which is not defined`);
  return ctx.namespace || 'default';
}

export interface ConnectOptions extends ClusterOptions {
  /** The --kubeconfig flag. */
  kubeconfig?: string;
  /** The --context flag. */
  context?: string;
  /** Environment to read KUBECONFIG / KUBERNETES_SERVICE_HOST from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Home directory for ~/.kube/config; default os.homedir(). */
  home?: string;
  /** Where warnings go (TLS verification off); default stderr. */
  warn?: (message: string) => void;
  /** --insecure-send-credentials-over-http: use a context that sends credentials over http:// (else exit 2). */
  allowCredentialsOverHttp?: boolean;
}

/**
 * The warning for a context that turns TLS verification off (`insecure-skip-tls-verify`), or
 * undefined. kwave never turns it off itself; a kubeconfig may, and then every run says so.
 */
function tlsWarning(kc: KubeConfig): string | undefined {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.skipTLSVerify) return undefined;
  return `warning: TLS verification of the API server is off for cluster "${cluster.name}" (insecure-skip-tls-verify in the kubeconfig): anyone on the network path can impersonate ${cluster.server} and see kwave's token`;
}

/**
 * Connects kwave to a cluster as kubectl would find it. Makes no request: an unreachable server
 * shows up as a KubeError on the first call. Throws KwaveError (code KUBE, exit 2) when no
 * configuration is found, a file cannot be read, the context does not exist, or it would send
 * credentials over http:// without `allowCredentialsOverHttp`.
 */
export function connect(options: ConnectOptions = {}): Cluster {
  const env = options.env ?? process.env;
  const source = configSourceOf(options.kubeconfig, env, options.home);
  const kc = loadKubeConfig(source, env);
  const where = describeSource(source);
  const namespace = selectContext(kc, options.context, where);
  const warn = options.warn ?? ((m: string) => void process.stderr.write(`kwave: ${m}\n`));
  const plain = credentialsOverHttp(kc);
  if (plain && !options.allowCredentialsOverHttp) throw badInput(plain.refusal);
  if (plain) warn(plain.warning);
  const warning = tlsWarning(kc);
  if (warning) warn(warning);
  return new Cluster(kc, { ...options, defaultNamespace: options.defaultNamespace ?? namespace });
}
