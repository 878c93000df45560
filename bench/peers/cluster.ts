// The peer benchmark's own requests to the cluster (as the admin, user agent `kwave-bench`, so the
// audit log tells them from the tools'): namespaces, the fleets each tool upgrades, and waiting
// for them. Setting up is not measured, so plain lists every second are good enough here.
import { readFileSync } from 'node:fs';
import pLimit from 'p-limit';
import YAML from 'yaml';
import { KubeHttp, KubeHttpError } from '../../src/sim/agent/kubeHttp.js';
import { realSleep as sleep } from '../../src/sleep.js';

const BENCH_USER_AGENT = 'kwave-bench';
/** The fleets' container, labels and images (the simulator's default image table has both). */
export const CONTAINER = 'nginx';
const FROM_IMAGE = 'nginx:1.14.2';
export const TO_IMAGE = 'nginx:1.25.3';
export const APP_LABEL = { app: 'web' };
const KWAVE_GATE = 'kwave.dev/in-place-ready';

export interface Kubeconfig {
  server: string;
  caPem: string;
  token: string;
}

export function readKubeconfig(file: string): Kubeconfig {
  const config = YAML.parse(readFileSync(file, 'utf8')) as {
    'current-context': string;
    contexts: { name: string; context: { cluster: string; user: string } }[];
    clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { name: string; user: { token?: string } }[];
  };
  const context = config.contexts.find((c) => c.name === config['current-context'])!.context;
  const cluster = config.clusters.find((c) => c.name === context.cluster)!.cluster;
  const token = config.users.find((u) => u.name === context.user)?.user.token;
  if (!token) throw new Error(`${file}: the benchmark needs a bearer token in the kubeconfig`);
  return {
    server: cluster.server,
    caPem: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8'),
    token,
  };
}

/** A kubeconfig for `token` on the same server. */
export function kubeconfigText(k: Kubeconfig, user: string): string {
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'bench',
        cluster: { server: k.server, 'certificate-authority-data': Buffer.from(k.caPem).toString('base64') },
      },
    ],
    users: [{ name: user, user: { token: k.token } }],
    contexts: [{ name: 'bench', context: { cluster: 'bench', user } }],
    'current-context': 'bench',
  });
}

export function benchClient(k: Kubeconfig): KubeHttp {
  return new KubeHttp({ url: k.server, caPem: k.caPem, token: k.token, userAgent: BENCH_USER_AGENT, maxSockets: 32 });
}

/** The answers of a server too busy to finish (a 1,000-pod delete of a collection took more than its 60 s). */
const RETRIED_CODES = new Set([429, 500, 503, 504]);

/**
 * A request of the bench's own, sent again (up to 5 times, a second apart) when the connection
 * broke or the server was too busy: kube-apiserver on two loaded cores resets a kept-alive socket
 * now and then, and one reset must not end an hour's benchmark. A create whose first try
 * may have landed counts a 409 AlreadyExists on a later try as done.
 */
async function call<T = unknown>(
  http: KubeHttp,
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await http.request<T>(method, path, body, contentType);
    } catch (err) {
      const answered = err instanceof KubeHttpError;
      if (answered && attempt > 1 && method === 'POST' && err.code === 409) return undefined;
      if ((answered && !RETRIED_CODES.has(err.code)) || attempt >= 5) throw err;
      await sleep(1000);
    }
  }
}

export interface PodObject {
  metadata: { name: string; uid: string; resourceVersion: string; namespace?: string; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
  status?: {
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; imageID?: string; restartCount?: number; ready?: boolean }[];
  };
}

export async function listPods(
  http: KubeHttp,
  namespace: string,
): Promise<{ items: PodObject[]; resourceVersion: string }> {
  const list = (await call<{ items: PodObject[]; metadata: { resourceVersion: string } }>(
    http,
    'GET',
    `/api/v1/namespaces/${namespace}/pods`,
  ))!;
  return { items: list.items, resourceVersion: list.metadata.resourceVersion };
}

const ready = (p: PodObject) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

async function until(what: string, timeoutMs: number, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(1000);
  }
}

/** A namespace whose `default` service account exists (pods are refused before it does). */
export async function createNamespace(http: KubeHttp, name: string): Promise<void> {
  await call(http, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await until(`the service account ${name}/default`, 60_000, () =>
    http.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`).then(
      () => true,
      () => false,
    ),
  );
}

/**
 * The namespace's CloneSets (when Kruise is installed: they would make new pods), every pod at
 * once (grace 0), then the namespace; resolves once no pod is left.
 */
export async function deleteNamespace(http: KubeHttp, name: string, cloneSets: boolean): Promise<void> {
  if (cloneSets)
    await call(http, 'DELETE', `/apis/apps.kruise.io/v1alpha1/namespaces/${name}/clonesets`).catch(ignoreNotFound);
  await call(http, 'DELETE', `/api/v1/namespaces/${name}/pods?gracePeriodSeconds=0`).catch(ignoreNotFound);
  await call(http, 'DELETE', `/api/v1/namespaces/${name}`).catch(ignoreNotFound);
  await until(`the pods of ${name} to go`, 300_000, async () => (await listPods(http, name)).items.length === 0);
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof KubeHttpError && err.code === 404)) throw err;
}

/**
 * Resolves once the namespace holds `count` pods, all Ready; waits 0.6 s a pod, at least 10
 * minutes (at 2,000 pods the hollow kubelets start 667 each on two shared cores).
 */
function untilPodsReady(http: KubeHttp, namespace: string, count: number): Promise<void> {
  return until(`${count} pods Ready in ${namespace}`, Math.max(600_000, count * 600), async () => {
    const { items } = await listPods(http, namespace);
    return items.length === count && items.every(ready);
  });
}

/**
 * kwave's fleet: `count` bare pods bound to the nodes in turn (as the simulator seeds its world),
 * declaring kwave's readiness gate, the gate's condition then set True through pods/status, as
 * `kwave adopt` does. The image pull policy is IfNotPresent, as the CloneSet's is set.
 */
export async function createPodFleet(
  http: KubeHttp,
  namespace: string,
  count: number,
  nodes: string[],
  image = FROM_IMAGE,
): Promise<void> {
  const limit = pLimit(16);
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      limit(async () => {
        const name = `web-${i}`;
        await call(http, 'POST', `/api/v1/namespaces/${namespace}/pods`, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, labels: APP_LABEL },
          spec: {
            nodeName: nodes[i % nodes.length],
            containers: [{ name: CONTAINER, image, imagePullPolicy: 'IfNotPresent' }],
            readinessGates: [{ conditionType: KWAVE_GATE }],
          },
        });
        await call(
          http,
          'PATCH',
          `/api/v1/namespaces/${namespace}/pods/${name}/status`,
          {
            status: {
              conditions: [
                {
                  type: KWAVE_GATE,
                  status: 'True',
                  lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
                },
              ],
            },
          },
          'application/strategic-merge-patch+json',
        );
      }),
    ),
  );
  await untilPodsReady(http, namespace, count);
}

/** The CloneSet the issue describes: in place if possible, maxUnavailable M, grace D seconds. */
export function cloneSetManifest(namespace: string, replicas: number, maxUnavailable: number, graceSeconds: number) {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace },
    spec: {
      replicas,
      selector: { matchLabels: APP_LABEL },
      template: {
        metadata: { labels: APP_LABEL },
        // Kruise defaults an unset pull policy to Always (a pull at every in-place restart); set
        // as kwave's fleet has it, so that both pay the same kubelet time.
        spec: {
          containers: [{ name: CONTAINER, image: FROM_IMAGE, imagePullPolicy: 'IfNotPresent' }],
          // Spread evenly, as kwave's fleet is bound to the nodes in turn: left to the scheduler,
          // 1,643 of 2,000 pods went to one node, whose kubelet then paced Kruise's whole run.
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'DoNotSchedule',
              labelSelector: { matchLabels: APP_LABEL },
            },
          ],
        },
      },
      updateStrategy: {
        type: 'InPlaceIfPossible',
        maxUnavailable,
        inPlaceUpdateStrategy: { gracePeriodSeconds: graceSeconds },
      },
    },
  };
}

export async function createCloneSet(http: KubeHttp, manifest: ReturnType<typeof cloneSetManifest>): Promise<void> {
  const ns = manifest.metadata.namespace;
  await call(http, 'POST', `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/clonesets`, manifest);
  await untilPodsReady(http, ns, manifest.spec.replicas);
}

/** The change a Kruise user makes: the template's image, as a JSON patch. */
export function changeCloneSetImage(http: KubeHttp, namespace: string, image: string): Promise<unknown> {
  return call(
    http,
    'PATCH',
    `/apis/apps.kruise.io/v1alpha1/namespaces/${namespace}/clonesets/web`,
    [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }],
    'application/json-patch+json',
  );
}
