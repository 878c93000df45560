// Benchmark of the simulated API server at fleet scale: fills a store with 10,000 and 50,000 pods
// and measures, through @kubernetes/client-node as kwave uses it, a full list, a list paged at
// limit=500, and a watch from resourceVersion 0 (time to the first event and to the last ADDED),
// plus a raw HTTPS list (server cost without client-side model parsing) and process memory.
// Server and client share this process, so each figure includes both sides.
import { request } from 'node:https';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../src/sim/apiserver/index.js';
import { NO_FAULTS } from '../src/sim/faults.js';
import { SimStats } from '../src/sim/stats.js';
import { Store, type KubeObject } from '../src/sim/store.js';

const SIZES = (process.env.BENCH_SIZES ?? '10000,50000').split(',').map(Number);

function pod(i: number): KubeObject {
  const name = `demo-${i}`;
  const started = '2025-01-01T00:00:00Z';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      labels: { app: 'demo', shard: String(i % 10) },
      annotations: { 'kwave.dev/owner': 'bench' },
    },
    spec: {
      nodeName: `node-${i % 3}`,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      containers: [
        {
          name: 'nginx',
          image: 'nginx:1.14.2',
          imagePullPolicy: 'IfNotPresent',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }],
    },
    status: {
      phase: 'Running',
      qosClass: 'BestEffort',
      podIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      hostIP: '192.168.0.1',
      startTime: started,
      conditions: [
        { type: 'kwave.dev/in-place-ready', status: 'True', lastTransitionTime: started },
        { type: 'Ready', status: 'True', lastTransitionTime: started },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: started },
      ],
      containerStatuses: [
        {
          name: 'nginx',
          ready: true,
          started: true,
          restartCount: 0,
          image: 'docker.io/library/nginx:1.14.2',
          imageID: `docker.io/library/nginx@sha256:${'a'.repeat(64)}`,
          containerID: `containerd://${i.toString(16).padStart(64, '0')}`,
          state: { running: { startedAt: started } },
        },
      ],
    },
  };
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
function memory(): string {
  globalThis.gc?.();
  const m = process.memoryUsage();
  return `rss ${mb(m.rss)}, heap used ${mb(m.heapUsed)}`;
}
async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const out = await fn();
  return [out, performance.now() - t0];
}

function rawList(api: ApiServer, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${api.url}${path}`,
      { ca: api.caPem, headers: { Authorization: `Bearer ${api.token}` } },
      (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => (bytes += d.length));
        res.on('end', () => resolve(bytes));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function watchAll(kc: KubeConfig, expected: number): Promise<{ first: number; all: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = 0;
    let seen = 0;
    let controller: AbortController | undefined;
    void new Watch(kc)
      .watch(
        '/api/v1/namespaces/default/pods',
        { resourceVersion: '0' },
        (type) => {
          if (type !== 'ADDED') return;
          if (seen++ === 0) first = performance.now() - t0;
          if (seen === expected) {
            controller?.abort();
            resolve({ first, all: performance.now() - t0 });
          }
        },
        (err) => {
          if (seen < expected) reject(err ?? new Error(`watch ended after ${seen} events`));
        },
      )
      .then((c) => (controller = c), reject);
  });
}

for (const n of SIZES) {
  const store = new Store({ historySize: 10_000 });
  const [, fillMs] = await timed(async () => {
    for (let i = 0; i < n; i++) store.create('pods', pod(i));
  });
  const api = await startApiServer({ store, stats: new SimStats(), faults: { ...NO_FAULTS } });
  const kc = new KubeConfig();
  kc.loadFromString(api.kubeconfig());
  const core = kc.makeApiClient(CoreV1Api);
  console.log(`\n${n} pods (store filled in ${fillMs.toFixed(0)} ms; ${memory()})`);

  const [bytes, rawMs] = await timed(() => rawList(api, '/api/v1/namespaces/default/pods'));
  const [, rawMs2] = await timed(() => rawList(api, '/api/v1/namespaces/default/pods'));
  console.log(
    `  raw HTTPS list:          ${rawMs.toFixed(0)} ms first, ${rawMs2.toFixed(0)} ms again (${mb(bytes)} of JSON)`,
  );

  const [full, fullMs] = await timed(() => core.listNamespacedPod({ namespace: 'default' }));
  if (full.items.length !== n) throw new Error(`full list returned ${full.items.length} of ${n}`);
  console.log(`  client-node full list:   ${fullMs.toFixed(0)} ms`);

  const [pages, pagedMs] = await timed(async () => {
    let cont: string | undefined;
    let count = 0;
    let pageCount = 0;
    do {
      const page = await core.listNamespacedPod({ namespace: 'default', limit: 500, _continue: cont });
      count += page.items.length;
      pageCount++;
      cont = page.metadata?._continue;
    } while (cont);
    if (count !== n) throw new Error(`paged list returned ${count} of ${n}`);
    return pageCount;
  });
  console.log(
    `  client-node limit=500:   ${pagedMs.toFixed(0)} ms (${pages} pages, ${(pagedMs / pages).toFixed(1)} ms/page)`,
  );

  const [selected, selMs] = await timed(() =>
    core.listNamespacedPod({ namespace: 'default', labelSelector: 'shard in (3),app=demo' }),
  );
  console.log(`  client-node selector:    ${selMs.toFixed(0)} ms (${selected.items.length} of ${n} pods)`);

  const w = await watchAll(kc, n);
  console.log(`  watch from rv=0:         first event ${w.first.toFixed(0)} ms, all ${n} ADDED ${w.all.toFixed(0)} ms`);
  console.log(`  memory after:            ${memory()}`);
  await api.close();
}
