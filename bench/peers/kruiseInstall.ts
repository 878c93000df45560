// OpenKruise on the benchmark's cluster, as far as CloneSet needs it: its manifests rendered at run
// time from the module's config/ (`kubectl kustomize config/default`: the `kruise-` names, the
// kruise-system namespace, RBAC, CRDs, webhooks), applied server-side without the Deployment and
// DaemonSet; then kruise-manager run on this machine as its ServiceAccount (a TokenRequest token),
// its webhook server reached by kube-apiserver on loopback: with WEBHOOK_HOST set it writes URL
// client configs (and its own certificates into WEBHOOK_CERT_DIR) instead of a Service. Its
// metrics, health and pprof ports are free ports. kruise-daemon is not needed: the kubelet
// restarts the container of an in-place image update.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { KubeHttp } from '../../src/sim/agent/kubeHttp.js';
import { realSleep as sleep } from '../../src/sleep.js';
import { freePort } from '../fleet/apiFigures.js';
import { stopOnInterrupt } from '../fleet/interrupt.js';
import { kubeconfigText, type Kubeconfig } from './cluster.js';

const KRUISE_NAMESPACE = 'kruise-system';
const SERVICE_ACCOUNT = 'kruise-manager';
/** The user kube-apiserver sees for kruise-manager (the audit log's `user`). */
export const KRUISE_USER = `system:serviceaccount:${KRUISE_NAMESPACE}:${SERVICE_ACCOUNT}`;
/** What runs in the cluster and is not needed here: the manager runs outside it, the daemon not at all. */
const LEFT_OUT = new Set(['Deployment', 'DaemonSet', 'Service']);

/** The rendered documents that are applied: everything but the workloads and the webhook Service. */
export function installableManifests<T extends { kind?: string }>(docs: readonly (T | null)[]): T[] {
  return docs.filter((d): d is T => d !== null && typeof d.kind === 'string' && !LEFT_OUT.has(d.kind));
}

/** Renders config/default of the module and applies what a manager outside the cluster needs. */
export function applyKruiseManifests(sourceDir: string, kubeconfigFile: string, dir: string): number {
  const rendered = spawnSync('kubectl', ['kustomize', path.join(sourceDir, 'config', 'default')], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (rendered.status !== 0) throw new Error(`kubectl kustomize: ${rendered.stderr.trim()}`);
  const docs = installableManifests(
    YAML.parseAllDocuments(rendered.stdout).map((d) => d.toJS() as { kind?: string } | null),
  );
  const file = path.join(dir, 'kruise.yaml');
  writeFileSync(file, docs.map((d) => YAML.stringify(d)).join('---\n'));
  const applied = spawnSync(
    'kubectl',
    ['apply', '--server-side', '--force-conflicts', '--field-manager=kwave-bench', '-f', file],
    { encoding: 'utf8', env: { ...process.env, KUBECONFIG: kubeconfigFile }, maxBuffer: 16 * 1024 * 1024 },
  );
  if (applied.status !== 0) throw new Error(`kubectl apply (Kruise's manifests): ${applied.stderr.trim()}`);
  return docs.length;
}

export interface KruiseManager {
  pid: number;
  logFile: string;
  stop(): Promise<void>;
}

async function until(what: string, timeoutMs: number, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`kruise-manager: timed out waiting for ${what}`);
    await sleep(500);
  }
}

interface WebhookConfiguration {
  webhooks?: { name: string; clientConfig: { url?: string } }[];
}

/** Starts kruise-manager and resolves once it is ready and every webhook points at it. */
export async function startKruiseManager(opts: {
  binary: string;
  admin: Kubeconfig;
  http: KubeHttp;
  dir: string;
}): Promise<KruiseManager> {
  const { http, dir } = opts;
  const token = await http.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${KRUISE_NAMESPACE}/serviceaccounts/${SERVICE_ACCOUNT}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 86_400 } },
  );
  const kubeconfig = path.join(dir, 'kruise-kubeconfig');
  writeFileSync(kubeconfig, kubeconfigText({ ...opts.admin, token: token.status.token }, SERVICE_ACCOUNT), {
    mode: 0o600,
  });
  const certDir = path.join(dir, 'kruise-certs');
  mkdirSync(certDir, { recursive: true });
  const [webhookPort, metricsPort, healthPort, pprofPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const logFile = path.join(dir, 'kruise-manager.log');
  const log = openSync(logFile, 'w');
  const child = spawn(
    opts.binary,
    [
      `--metrics-addr=127.0.0.1:${metricsPort}`,
      `--health-probe-addr=127.0.0.1:${healthPort}`,
      `--pprof-addr=127.0.0.1:${pprofPort}`,
    ],
    {
      stdio: ['ignore', log, log],
      env: {
        ...process.env,
        KUBECONFIG: kubeconfig,
        POD_NAMESPACE: KRUISE_NAMESPACE,
        WEBHOOK_HOST: '127.0.0.1',
        WEBHOOK_PORT: String(webhookPort),
        WEBHOOK_CERT_DIR: certDir,
      },
    },
  );
  closeSync(log);
  let exited = false;
  const closed = new Promise<void>((resolve) =>
    child.on('close', () => {
      exited = true;
      resolve();
    }),
  );
  const forget = stopOnInterrupt(() => stop());
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await closed;
    forget();
  };
  try {
    const alive = async (check: () => Promise<boolean>) => {
      if (exited) throw new Error(`kruise-manager exited; its log: ${logFile}`);
      return check();
    };
    await until('/readyz', 120_000, () => alive(async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok));
    for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
      const name = `kruise-${kind.startsWith('mutating') ? 'mutating' : 'validating'}-webhook-configuration`;
      await until(`${name} to point at it`, 120_000, () =>
        alive(async () => {
          const c = await http.request<WebhookConfiguration>(
            'GET',
            `/apis/admissionregistration.k8s.io/v1/${kind}/${name}`,
          );
          return (c.webhooks ?? []).every((w) => w.clientConfig.url?.startsWith(`https://127.0.0.1:${webhookPort}/`));
        }),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid: child.pid!, logFile, stop };
}
