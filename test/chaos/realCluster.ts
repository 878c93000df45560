// The chaos harness's cluster on the real control plane (etcd, kube-apiserver, controller-manager,
// scheduler, kwave's node agent or real kubelets), one fresh per scenario. Everything goes through the API as a
// user of its own (the observer: not kwave's admin user, so the audit log tells kwave's requests
// apart): the other writer's guarded patches, deletions, the final reads and the change feed (a
// list+watch per collection). The audit log gives kwave's accepted image patches per pod and its
// pod lists per batch of runs. The real faults: kube-apiserver restarted, etcd restarted, etcd
// frozen, etcd compacted before a restart (so resumed watches meet 410 Gone), a node's heartbeats
// stopped (with real kubelets: the kubelet frozen), a kubelet restarted; a Node deleted (the real
// pod GC removes its pods), evictions through the Eviction API, containers crashed by the node
// agent's kubelet; in a scenario with a slow watch, kwave's requests go through the fault proxy
// (watchProxy.ts), which holds its watch streams back and cuts them.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderKubeconfig, writeKubeconfig } from '../../src/sim/apiserver/kubeconfig.js';
import { paths } from '../../src/sim/controlPlane/flags.js';
import { KubeHttp } from '../../src/sim/agent/kubeHttp.js';
import { AuditTail, type AuditRecord } from '../../src/sim/controlPlane/index.js';
import { startRealSim } from '../../src/sim/real/index.js';
import type { KubeObject } from '../../src/sim/store.js';
import { ApiFeed } from './apiFeed.js';
import {
  isSelected,
  NAMESPACE,
  RECORD_NAME,
  type BackendFaultReport,
  type ChaosCluster,
  type ClusterChange,
} from './cluster.js';
import type { Scenario } from './scenario.js';
import { startWatchProxy, type WatchProxy } from './watchProxy.js';

const OBSERVER = 'kwave-chaos-observer';
const PODS = `/api/v1/namespaces/${NAMESPACE}/pods`;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`;
const RECORD = `/api/v1/namespaces/${NAMESPACE}/configmaps/${RECORD_NAME}`;

export async function startRealCluster(s: Scenario, dir: string, timeScale: number): Promise<ChaosCluster> {
  const kubeconfigPath = join(dir, 'kubeconfig');
  const sim = await startRealSim({
    pods: s.pods,
    seed: s.seed,
    timeScale,
    kubelet: s.kubelet ?? 'simulated',
    kubeconfigOut: kubeconfigPath,
    controlPlane: { users: [{ name: OBSERVER, groups: ['system:masters'] }] },
  });
  const cp = sim.controlPlane;
  let proxy: WatchProxy | undefined;
  if (s.slowWatch) {
    // kube-apiserver's own serving pair: kwave's kubeconfig keeps the cluster's CA, only its server moves.
    const pki = paths(cp.dir);
    try {
      proxy = await startWatchProxy({
        upstream: cp.url,
        upstreamCaPem: cp.caPem,
        certPem: await readFile(pki.servingCert, 'utf8'),
        keyPem: await readFile(pki.servingKey, 'utf8'),
      });
    } catch (err) {
      await sim.close();
      throw err;
    }
    await writeKubeconfig(kubeconfigPath, renderKubeconfig({ server: proxy.url, caPem: cp.caPem, token: sim.token }));
  }
  const http = new KubeHttp({
    url: cp.url,
    caPem: cp.caPem,
    token: cp.tokens[OBSERVER]!,
    userAgent: 'kwave-chaos/observer',
  });
  const listeners = new Set<(change: ClusterChange) => void>();
  const fan = (change: ClusterChange) => {
    for (const l of listeners) l(change);
  };
  const feeds = [
    new ApiFeed(http, 'pods', PODS, fan),
    new ApiFeed(http, 'leases', LEASES, fan),
    new ApiFeed(http, 'nodes', '/api/v1/nodes', fan),
  ];
  const audit = new KwaveAudit(new AuditTail(cp.auditLogPath), cp.adminUser);
  const report: BackendFaultReport = { observer410: 0, kwaveRelists: 0, problems: [] };
  // Restarts and pauses one after another: each needs the one before to have finished.
  let faultChain: Promise<void> = Promise.resolve();
  const fault = (what: string, run: () => Promise<void>) => {
    faultChain = faultChain.then(run).catch((err: unknown) => {
      report.problems.push(`${what}: ${(err as Error).message.split('\n')[0]}`);
    });
  };
  const get = (path: string): Promise<KubeObject | undefined> =>
    whileDown(async () => {
      try {
        return await http.request<KubeObject>('GET', path);
      } catch (err) {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      }
    });
  const listSelected = () =>
    whileDown(async () => (await http.request<{ items: KubeObject[] }>('GET', PODS)).items.filter(isSelected));

  try {
    for (const f of feeds) await f.start();
  } catch (err) {
    await proxy?.close();
    await sim.close();
    throw err;
  }
  return {
    kubeconfigPath,
    selectedPods: listSelected,
    lease: () => get(`${LEASES}/${RECORD_NAME}`),
    record: () => get(RECORD),
    touchPod: async (pod, change) => {
      const metadata = { resourceVersion: pod.metadata.resourceVersion, ...change };
      try {
        await http.request('PATCH', `${PODS}/${pod.metadata.name}`, { metadata }, 'application/merge-patch+json');
        return true;
      } catch {
        return false; // 409: changed meanwhile; 404: gone; 5xx: a fault of the moment
      }
    },
    deletePod: async (name) => {
      await http
        .request('DELETE', `${PODS}/${name}`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 })
        .catch(() => undefined);
    },
    evictPod: async (name, graceSeconds) => {
      const eviction = {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name, namespace: NAMESPACE },
        deleteOptions: { gracePeriodSeconds: graceSeconds },
      };
      return http.request('POST', `${PODS}/${name}/eviction`, eviction).then(
        () => true,
        () => false, // 429: a disruption budget; 404: gone; a fault of the moment
      );
    },
    crashContainer: async (name) => sim.agent.crashContainer?.(NAMESPACE, name) ?? false,
    deleteNode: async (node) => {
      await whileDown(() => http.request('DELETE', `/api/v1/nodes/${node}`));
    },
    // The agent's own write (the node back: its lease renewed) fails while the apiserver restarts: try again.
    setNodeReady: async (node, ready) => {
      for (let tries = 0; ; tries++) {
        try {
          return await sim.agent.setNodeReady(node, ready);
        } catch (err) {
          if (tries >= 120) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    },
    ...(proxy ? { setWatchDelay: (ms: number) => proxy.setWatchDelay(ms), cutWatches: () => proxy.cutWatches() } : {}),
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    resetStats: async () => {
      sim.stats.reset();
      audit.read();
    },
    startBackendFaults: (sc, timers) => {
      let last = 0;
      const at = (ms: number | undefined, what: string, run: () => Promise<void>) => {
        if (ms === undefined) return;
        last = Math.max(last, ms);
        timers.push(setTimeout(() => fault(what, run), ms));
      };
      at(sc.real?.apiserverRestartAtMs, 'apiserver restart', () => cp.restartApiServer());
      at(sc.real?.etcdRestartAtMs, 'etcd restart', () => cp.restartEtcd());
      at(sc.real?.etcdPause?.atMs, 'etcd pause', () => cp.pauseEtcd(sc.real!.etcdPause!.forMs));
      at(sc.real?.watchExpiryAtMs, 'watch expiry', async () => {
        await compactEtcd(cp.etcdUrl);
        await cp.restartApiServer();
      });
      const restart = sc.real?.kubeletRestart;
      at(restart?.atMs, 'kubelet restart', async () => {
        if (!sim.kubelets) throw new Error('no real kubelets to restart (--kubelet real)');
        await sim.kubelets.restartKubelet(restart!.node);
      });
      // Created after the faults' timers: at `last` it fires after the last of them joined the chain.
      return new Promise<void>((resolve) => timers.push(setTimeout(() => void faultChain.then(resolve), last)));
    },
    runnersStarting: (runners) => audit.batch(runners),
    runnersRan: (holders) => audit.ran(holders),
    final: async () => {
      await faultChain;
      const pods = await containersReported(listSelected, (l) => {
        listeners.add(l);
        return () => listeners.delete(l);
      });
      const [record, lease] = [await get(RECORD), await get(`${LEASES}/${RECORD_NAME}`)];
      audit.read();
      return {
        pods,
        record,
        lease,
        maxNotReady: sim.stats.snapshot().maxNotReady[NAMESPACE] ?? 0,
        patchesRefused: 0,
        imagePatches: audit.imagePatches,
      };
    },
    faultReport: () => ({
      ...report,
      problems: [
        ...report.problems,
        ...(proxy && proxy.stats.watches === 0 ? ['slow watch: kwave opened no watch through the fault proxy'] : []),
      ],
      observer410: feeds.reduce((n, f) => n + f.expired, 0),
      kwaveRelists: audit.relists(),
      ...(proxy ? { slowWatch: { delayedChunks: proxy.stats.delayedChunks, cuts: proxy.stats.cuts } } : {}),
    }),
    close: async () => {
      await faultChain;
      for (const f of feeds) f.close();
      http.close();
      await proxy?.close();
      await sim.close();
    },
  };
}

/**
 * The selected pods once every container reports an image ID again, or as they are after 60 s: a
 * restarted kubelet starts its node's containers afresh (its fake runtime starts empty), and a
 * container it is creating reports none yet. The end is judged on what the kubelet settles on.
 * Read again after each pod change the harness's own watch sees, not on a timer.
 */
async function containersReported(
  list: () => Promise<KubeObject[]>,
  follow: (listener: (change: ClusterChange) => void) => () => void,
): Promise<KubeObject[]> {
  const deadline = Date.now() + 60_000;
  let changes = 0;
  let wake: (() => void) | undefined;
  const stop = follow((change) => {
    if (change.resource !== 'pods') return;
    changes++;
    wake?.();
  });
  try {
    for (;;) {
      const seen = changes;
      const pods = await list();
      const statuses = pods.flatMap(
        (p) => (p.status as { containerStatuses?: { imageID?: string }[] } | undefined)?.containerStatuses ?? [{}],
      );
      if (statuses.every((cs) => cs.imageID) || Date.now() > deadline) return pods;
      if (changes === seen)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deadline - Date.now());
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      wake = undefined;
    }
  } finally {
    stop();
  }
}

/**
 * The harness's reads go on through the faults: a refused connection (the apiserver restarting)
 * or a 5xx/429 (etcd frozen) is tried again for up to 90 s.
 */
async function whileDown<T>(read: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      return await read();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      const transient = typeof code === 'string' || code === 429 || (typeof code === 'number' && code >= 500);
      if (!transient || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

/** Compacts etcd up to its newest revision (its v3 JSON gateway), so no older version can be watched from. */
export async function compactEtcd(etcdUrl: string): Promise<void> {
  const range = await fetch(`${etcdUrl}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from('/').toString('base64') }),
  });
  const revision = ((await range.json()) as { header?: { revision?: string } }).header?.revision;
  if (!range.ok || !revision) throw new Error(`etcd range answered ${range.status}`);
  const compacted = await fetch(`${etcdUrl}/v3/kv/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision, physical: true }),
  });
  if (!compacted.ok) throw new Error(`etcd compaction answered ${compacted.status}: ${await compacted.text()}`);
}

/** kwave's requests in the audit log (its user is the kubeconfig's admin): accepted image patches per pod, pod lists per batch of runs. */
class KwaveAudit {
  readonly imagePatches = new Map<string, number>();
  /** Per batch of runs started together: how many runners, and how many pod lists kwave sent meanwhile. */
  private readonly batches: { runners: number; lists: number }[] = [];

  constructor(
    private readonly tail: AuditTail,
    private readonly user: string,
  ) {}

  read(): void {
    for (const r of this.tail.read()) if (r.user === this.user && r.namespace === NAMESPACE) this.count(r);
  }

  private count(r: AuditRecord): void {
    if (r.resource !== 'pods' || r.subresource !== undefined) return;
    if (r.verb === 'patch' && r.name && r.code !== undefined && r.code >= 200 && r.code < 300)
      this.imagePatches.set(r.name, (this.imagePatches.get(r.name) ?? 0) + 1);
    if (process.env.KWAVE_CHAOS_DEBUG && (r.verb === 'list' || r.verb === 'watch'))
      process.stderr.write(`[audit] kwave ${r.verb} pods ${r.code ?? ''} (batch ${this.batches.length})\n`);
    if (r.verb === 'list') {
      const last = this.batches.at(-1);
      if (last) last.lists++;
    }
  }

  /** Called as a batch starts: what the log holds so far belongs to the batches before. */
  batch(runners: number): void {
    this.read();
    this.batches.push({ runners, lists: 0 });
  }

  /** How many of the batch's runners took the lease (the change feed's holders): only those list pods. */
  ran(holders: number): void {
    this.read();
    const last = this.batches.at(-1);
    if (last) last.runners = Math.max(holders, last.lists > 0 ? 1 : 0);
  }

  /** Lists beyond one per runner that ran: each run lists its pods once, then again only after a 410. */
  relists(): number {
    this.read();
    return this.batches.reduce((n, b) => n + Math.max(0, b.lists - b.runners), 0);
  }
}
