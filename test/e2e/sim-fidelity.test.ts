// Fidelity of the simulated kube-apiserver, driven as kwave and users drive a real one: through
// @kubernetes/client-node 1.4 and through the real kubectl with the kubeconfig it writes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { missing } from './helpers/prerequisites.js';
import { putRunningPod, startSimApi, type SimApi } from './helpers/simApi.js';
import { startApiOnly, type ApiOnly } from './helpers/apiOnly.js';
import { embeddedOnly } from './helpers/backend.js';

const run = promisify(execFile);
const SMP = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface StatusBody {
  kind: string;
  status: string;
  reason?: string;
  message: string;
  code: number;
  details?: { causes?: { reason: string; field: string }[] };
}

/** Awaits a refusal and returns its Status body (client-node hands it over as a JSON string). */
async function refused(p: Promise<unknown>, code: number): Promise<StatusBody> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ApiException, `expected an ApiException, got ${String(err)}`);
    assert.equal(err.code, code, `HTTP ${err.code}: ${String(err.body)}`);
    const body = JSON.parse(String(err.body)) as StatusBody;
    assert.equal(body.kind, 'Status');
    assert.equal(body.status, 'Failure');
    assert.equal(body.code, code);
    return body;
  }
  assert.fail(`expected HTTP ${code}`);
}

interface WatchEvent {
  type: string;
  object: { kind?: string; code?: number; reason?: string; message?: string; metadata?: { name?: string; resourceVersion?: string; labels?: Record<string, string> } };
}

/** Runs a watch until `until` says it has seen enough (or the server ends it); returns the events. */
function watchUntil(sim: SimApi, path: string, query: Record<string, string | number | boolean | undefined>, until: (events: WatchEvent[]) => boolean, timeoutMs = 8000): Promise<{ events: WatchEvent[]; ended: boolean; error?: unknown }> {
  return new Promise((resolve, reject) => {
    const events: WatchEvent[] = [];
    let controller: AbortController | undefined;
    let settled = false;
    const finish = (ended: boolean, error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      controller?.abort();
      resolve({ events, ended, error });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    new Watch(sim.kc)
      .watch(
        path,
        query,
        (type, object) => {
          events.push({ type, object: object as WatchEvent['object'] });
          if (until(events)) finish(false);
        },
        (err) => finish(true, err),
      )
      .then((c) => {
        controller = c;
        if (settled) c.abort();
      }, reject);
  });
}

describe('simulated kube-apiserver through @kubernetes/client-node', { skip: embeddedOnly("reads and writes the simulator's store directly (watch window, bookmark interval, injected faults, its own request counts)") }, () => {
  let sim: SimApi;
  let core: CoreV1Api;
  let coord: CoordinationV1Api;

  before(async () => {
    sim = await startSimApi({ historySize: 200, bookmarkIntervalMs: 200 });
    core = sim.kc.makeApiClient(CoreV1Api);
    coord = sim.kc.makeApiClient(CoordinationV1Api);
    sim.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'web' }, status: { phase: 'Active' } });
    const tiers = ['front', 'back', 'db'];
    for (let i = 0; i < 12; i++) {
      putRunningPod(sim.store, `web-${String(i).padStart(2, '0')}`, {
        namespace: 'web',
        nodeName: `node-${i % 3}`,
        labels: { app: 'web', tier: tiers[i % 3]!, ...(i === 0 ? { canary: 'true' } : {}) },
      });
    }
  });
  after(async () => {
    await sim.close();
  });

  test('401 Unauthorized without a token and with a wrong one', async () => {
    const noToken = await new Promise<{ code: number; body: string }>((resolve, reject) => {
      const req = request(`${sim.api.url}/api/v1/namespaces/web/pods`, { ca: sim.api.caPem }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += String(d)));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(noToken.code, 401);
    assert.deepEqual(JSON.parse(noToken.body), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    // client-node drops the body of a 401 (its generated code throws before reading it).
    const wrong = startSimApiClientWithToken(sim, 'not-the-token');
    await assert.rejects(wrong.listNamespacedPod({ namespace: 'web' }), (err: unknown) => err instanceof ApiException && err.code === 401);
  });

  test('list with set-based label selectors and a field selector', async () => {
    const names = async (labelSelector?: string, fieldSelector?: string) =>
      (await core.listNamespacedPod({ namespace: 'web', labelSelector, fieldSelector })).items.map((p) => p.metadata!.name);
    assert.deepEqual(await names('app in (web),tier notin (db),!canary'), ['web-01', 'web-03', 'web-04', 'web-06', 'web-07', 'web-09', 'web-10']);
    assert.deepEqual(await names('canary'), ['web-00']);
    assert.deepEqual(await names('tier=db', 'spec.nodeName=node-2'), ['web-02', 'web-05', 'web-08', 'web-11']);
    assert.deepEqual(await names(undefined, 'status.phase!=Running'), []);
    const everywhere = await core.listPodForAllNamespaces({ labelSelector: 'app=web' });
    assert.equal(everywhere.items.length, 12);
    const bad = await refused(core.listNamespacedPod({ namespace: 'web', fieldSelector: 'spec.containers=x' }), 400);
    assert.equal(bad.reason, 'BadRequest');
  });

  test('pagination: limit/continue pages share one resourceVersion and cover the list once', async () => {
    const seen: string[] = [];
    const versions = new Set<string>();
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await core.listNamespacedPod({ namespace: 'web', limit: 5, _continue: cont });
      pages++;
      seen.push(...page.items.map((p) => p.metadata!.name!));
      versions.add(page.metadata!.resourceVersion!);
      cont = page.metadata!._continue;
      if (pages === 1) {
        assert.equal(page.metadata!.remainingItemCount, 7);
        // A change between pages does not show in the later pages (a consistent snapshot).
        await core.patchNamespacedPod({ name: 'web-11', namespace: 'web', body: { metadata: { labels: { paged: 'yes' } } } }, MERGE);
      }
    } while (cont);
    assert.equal(pages, 3);
    assert.deepEqual(seen, Array.from({ length: 12 }, (_, i) => `web-${String(i).padStart(2, '0')}`));
    assert.equal(versions.size, 1);
  });

  test('watch resumes from a list resourceVersion and delivers changes in order', async () => {
    const list = await core.listNamespacedPod({ namespace: 'web' });
    const rv = list.metadata!.resourceVersion!;
    await core.patchNamespacedPod({ name: 'web-01', namespace: 'web', body: { metadata: { labels: { step: '1' } } } }, MERGE);
    await core.patchNamespacedPod({ name: 'web-02', namespace: 'web', body: { metadata: { labels: { step: '2' } } } }, MERGE);
    const { events } = await watchUntil(sim, '/api/v1/namespaces/web/pods', { resourceVersion: rv }, (ev) => ev.length >= 2);
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata?.name}`), ['MODIFIED web-01', 'MODIFIED web-02']);
    assert.ok(Number(events[1]!.object.metadata!.resourceVersion) > Number(events[0]!.object.metadata!.resourceVersion));
  });

  test('watch without a resourceVersion starts with ADDED for each existing object', async () => {
    const { events } = await watchUntil(sim, '/api/v1/namespaces/web/pods', { labelSelector: 'tier=db' }, (ev) => ev.length >= 4);
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'ADDED', 'ADDED', 'ADDED']);
  });

  test('a label change out of a watch selector arrives as DELETED', async () => {
    const rv = (await core.listNamespacedPod({ namespace: 'web' })).metadata!.resourceVersion!;
    await core.patchNamespacedPod({ name: 'web-03', namespace: 'web', body: { metadata: { labels: { tier: 'db' } } } }, MERGE);
    const { events } = await watchUntil(sim, '/api/v1/namespaces/web/pods', { resourceVersion: rv, labelSelector: 'tier=front' }, (ev) => ev.length >= 1);
    assert.equal(events[0]!.type, 'DELETED');
    assert.equal(events[0]!.object.metadata!.name, 'web-03');
    assert.equal(events[0]!.object.metadata!.labels!.tier, 'front', 'the last state that matched');
  });

  test('a watch from a version older than the window gets ERROR 410 Expired; so does an old continue token', async () => {
    const firstPage = await core.listNamespacedPod({ namespace: 'web', limit: 2 });
    const old = firstPage.metadata!.resourceVersion!;
    for (let i = 0; i < 210; i++) {
      await core.patchNamespacedPod({ name: 'web-04', namespace: 'web', body: { metadata: { annotations: { n: String(i) } } } }, MERGE);
    }
    const { events, ended } = await watchUntil(sim, '/api/v1/namespaces/web/pods', { resourceVersion: old }, () => false);
    assert.equal(ended, true, 'the server closes the stream after the error');
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'ERROR');
    assert.equal(events[0]!.object.code, 410);
    assert.equal(events[0]!.object.reason, 'Expired');
    assert.match(events[0]!.object.message!, new RegExp(`^too old resource version: ${old} \\(\\d+\\)$`));
    const expired = await refused(core.listNamespacedPod({ namespace: 'web', limit: 2, _continue: firstPage.metadata!._continue }), 410);
    assert.equal(expired.reason, 'Expired');
  });

  test('bookmarks carry only kind, apiVersion and resourceVersion; timeoutSeconds ends cleanly', async () => {
    const rv = (await core.listNamespacedPod({ namespace: 'web' })).metadata!.resourceVersion!;
    const { events, ended, error } = await watchUntil(sim, '/api/v1/namespaces/web/pods', { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 1 }, () => false);
    assert.equal(ended, true);
    assert.equal(error ?? null, null);
    const bookmarks = events.filter((e) => e.type === 'BOOKMARK');
    assert.ok(bookmarks.length >= 1);
    assert.deepEqual(Object.keys(bookmarks[0]!.object).sort(), ['apiVersion', 'kind', 'metadata']);
    assert.deepEqual(Object.keys(bookmarks[0]!.object.metadata!), ['resourceVersion']);
  });

  test('409 Conflict on a stale update and on a stale resourceVersion inside a patch', async () => {
    const pod = await core.readNamespacedPod({ name: 'web-05', namespace: 'web' });
    await core.patchNamespacedPod({ name: 'web-05', namespace: 'web', body: { metadata: { labels: { touched: 'yes' } } } }, MERGE);
    const stale = await refused(core.replaceNamespacedPod({ name: 'web-05', namespace: 'web', body: pod }), 409);
    assert.equal(stale.reason, 'Conflict');
    assert.equal(stale.message, 'Operation cannot be fulfilled on pods "web-05": the object has been modified; please apply your changes to the latest version and try again');
    const guarded = await refused(
      core.patchNamespacedPod({ name: 'web-05', namespace: 'web', body: { metadata: { resourceVersion: pod.metadata!.resourceVersion }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] } } }, SMP),
      409,
    );
    assert.equal(guarded.reason, 'Conflict');
    // Without a version the patch applies.
    await core.patchNamespacedPod({ name: 'web-05', namespace: 'web', body: { metadata: { labels: { again: 'yes' } } } }, MERGE);
  });

  test('strategic merge patches a container image by name and leaves the other container alone', async () => {
    putRunningPod(sim.store, 'two', { namespace: 'web', containers: [{ name: 'app', image: 'nginx:1.14.2' }, { name: 'sidecar', image: 'busybox:1.36' }] });
    const patched = await core.patchNamespacedPod({ name: 'two', namespace: 'web', body: { spec: { containers: [{ name: 'app', image: 'nginx:1.25.3' }] } } }, SMP);
    assert.deepEqual(patched.spec!.containers.map((c) => `${c.name}=${c.image}`), ['app=nginx:1.25.3', 'sidecar=busybox:1.36']);
    const missingKey = await refused(core.patchNamespacedPod({ name: 'two', namespace: 'web', body: { spec: { containers: [{ image: 'i' }] } } }, SMP), 500);
    assert.equal(missingKey.message, 'map: map[image:i] does not contain declared merge key: name');
    // client-node's default patch type is JSON patch.
    const jp = await core.patchNamespacedPod({ name: 'two', namespace: 'web', body: [{ op: 'replace', path: '/spec/containers/1/image', value: 'busybox:1.37' }] });
    assert.equal(jp.spec!.containers[1]!.image, 'busybox:1.37');
  });

  const forbidden: [string, object][] = [
    ['ports', { spec: { containers: [{ name: 'nginx', ports: [{ containerPort: 8080 }] }] } }],
    ['env', { spec: { containers: [{ name: 'nginx', env: [{ name: 'A', value: '1' }] }] } }],
    ['readinessGates', { spec: { readinessGates: [{ conditionType: 'example.com/other' }] } }],
    ['nodeName', { spec: { nodeName: 'node-9' } }],
    ['added container', { spec: { containers: [{ name: 'extra', image: 'busybox:1.36' }] } }],
    ['removed container', { spec: { containers: [{ name: 'nginx', $patch: 'delete' }] } }],
  ];
  for (const [what, body] of forbidden) {
    test(`422 Invalid for a forbidden pod change: ${what}`, async () => {
      const s = await refused(core.patchNamespacedPod({ name: 'web-06', namespace: 'web', body }, SMP), 422);
      assert.equal(s.reason, 'Invalid');
      assert.match(s.message, /^Pod "web-06" is invalid: spec(\.containers)?: Forbidden: pod updates may not /);
      assert.equal(s.details!.causes![0]!.reason, 'FieldValueForbidden');
    });
  }

  test('status sent to pods is ignored; spec sent to pods/status is ignored; condition types are checked', async () => {
    const main = await core.patchNamespacedPod({ name: 'web-07', namespace: 'web', body: { status: { phase: 'Failed' }, metadata: { labels: { m: '1' } } } }, MERGE);
    assert.equal(main.status!.phase, 'Running');
    assert.equal(main.metadata!.labels!.m, '1');
    const st = await core.patchNamespacedPodStatus(
      { name: 'web-07', namespace: 'web', body: { spec: { containers: [{ name: 'nginx', image: 'nginx:9' }] }, status: { conditions: [{ type: 'kwave.dev/in-place-ready', status: 'False' }] } } },
      SMP,
    );
    assert.equal(st.spec!.containers[0]!.image, 'nginx:1.14.2');
    const gate = st.status!.conditions!.find((c) => c.type === 'kwave.dev/in-place-ready');
    assert.equal(gate!.status, 'False');
    assert.equal(st.status!.conditions!.length, 3, 'merged by type, others kept');
    const bad = await refused(core.patchNamespacedPodStatus({ name: 'web-07', namespace: 'web', body: { status: { conditions: [{ type: 'not valid!', status: 'True' }] } } }, SMP), 422);
    assert.match(bad.message, /status\.conditions\[\d\]\.type: Invalid value: "not valid!"/);
  });

  test('create via POST: Pending/BestEffort status, generateName, AlreadyExists, Invalid name', async () => {
    const body: V1Pod = { metadata: { generateName: 'gen-' }, spec: { containers: [{ name: 'c', image: 'nginx:1.14.2' }] } };
    const created = await core.createNamespacedPod({ namespace: 'web', body });
    assert.match(created.metadata!.name!, /^gen-[a-z0-9]{5}$/);
    assert.equal(created.status!.phase, 'Pending');
    assert.equal(created.status!.qosClass, 'BestEffort');
    const dup = await refused(core.createNamespacedPod({ namespace: 'web', body: { ...body, metadata: { name: created.metadata!.name } } }), 409);
    assert.equal(dup.reason, 'AlreadyExists');
    const badName = await refused(core.createNamespacedPod({ namespace: 'web', body: { ...body, metadata: { name: 'Not_Valid' } } }), 422);
    assert.equal(badName.reason, 'Invalid');
    const missing = await refused(core.readNamespacedPod({ name: 'nope', namespace: 'web' }), 404);
    assert.equal(missing.message, 'pods "nope" not found');
  });

  test('delete: a scheduled pod gets deletionTimestamp and stays; an unscheduled one goes at once', async () => {
    const graceful = await core.deleteNamespacedPod({ name: 'web-08', namespace: 'web' });
    assert.ok(graceful.metadata!.deletionTimestamp);
    assert.equal(graceful.metadata!.deletionGracePeriodSeconds, 30);
    assert.ok(sim.store.get('pods', 'web', 'web-08'));
    putRunningPod(sim.store, 'unscheduled', { namespace: 'web', nodeName: '' });
    await core.deleteNamespacedPod({ name: 'unscheduled', namespace: 'web' });
    assert.equal(sim.store.get('pods', 'web', 'unscheduled'), undefined);
  });

  test('leases: create, PUT without resourceVersion is 422, stale PUT is 409, fresh PUT works', async () => {
    const lease = await coord.createNamespacedLease({ namespace: 'web', body: { metadata: { name: 'kwave-lock' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } } });
    const noRv = await refused(coord.replaceNamespacedLease({ name: 'kwave-lock', namespace: 'web', body: { metadata: { name: 'kwave-lock' }, spec: { holderIdentity: 'b' } } }), 422);
    assert.equal(noRv.message, 'leases.coordination.k8s.io "kwave-lock" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    const renewed = await coord.replaceNamespacedLease({ name: 'kwave-lock', namespace: 'web', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } } });
    assert.equal(renewed.spec!.holderIdentity, 'b');
    const stale = await refused(coord.replaceNamespacedLease({ name: 'kwave-lock', namespace: 'web', body: lease }), 409);
    assert.equal(stale.message, 'Operation cannot be fulfilled on leases.coordination.k8s.io "kwave-lock": the object has been modified; please apply your changes to the latest version and try again');
  });

  test('faults: 429 with Retry-After, 503, and a watch cut', async () => {
    sim.faults.errorRate = 1;
    sim.faults.errorCodes = [429];
    sim.faults.retryAfterSeconds = 2;
    try {
      await core.listNamespacedPod({ namespace: 'web' });
      assert.fail('expected 429');
    } catch (err) {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 429);
      assert.equal(err.headers['retry-after'], '2');
      assert.equal(JSON.parse(String(err.body)).reason, 'TooManyRequests');
    }
    sim.faults.errorCodes = [503];
    assert.equal((await refused(core.readNamespacedPod({ name: 'web-09', namespace: 'web' }), 503)).reason, 'ServiceUnavailable');
    sim.faults.errorRate = 0;
    sim.faults.watchCutSeconds = 1;
    try {
      const rv = (await core.listNamespacedPod({ namespace: 'web' })).metadata!.resourceVersion!;
      const { ended } = await watchUntil(sim, '/api/v1/namespaces/web/pods', { resourceVersion: rv }, () => false, 6000);
      assert.equal(ended, true, 'the stream was cut');
    } finally {
      sim.faults.watchCutSeconds = 0;
    }
  });

  test('every request is counted by audit verb and resource', async () => {
    // Its own requests, one of each, on its own objects: it holds whatever ran before it.
    sim.stats.reset();
    putRunningPod(sim.store, 'counted', { namespace: 'web', labels: { app: 'counted' } });
    await core.listNamespacedPod({ namespace: 'web', labelSelector: 'app=counted' });
    await watchUntil(sim, '/api/v1/namespaces/web/pods', { labelSelector: 'app=counted' }, (ev) => ev.length >= 1);
    const pod = await core.readNamespacedPod({ name: 'counted', namespace: 'web' });
    await core.patchNamespacedPod({ name: 'counted', namespace: 'web', body: { metadata: { labels: { touched: '1' } } } }, MERGE);
    await core.patchNamespacedPodStatus({ name: 'counted', namespace: 'web', body: { status: { conditions: [{ type: 'kwave.dev/in-place-ready', status: 'False' }] } } }, SMP);
    await core.createNamespacedPod({ namespace: 'web', body: { metadata: { name: 'counted-2' }, spec: { containers: [{ name: 'c', image: 'nginx:1.14.2' }] } } });
    const fresh = await core.readNamespacedPod({ name: 'counted', namespace: 'web' });
    await core.replaceNamespacedPod({ name: 'counted', namespace: 'web', body: { ...fresh, metadata: { ...fresh.metadata, labels: { ...fresh.metadata!.labels, replaced: '1' } } } });
    await core.deleteNamespacedPod({ name: 'counted-2', namespace: 'web' });
    const lease = await coord.createNamespacedLease({ namespace: 'web', body: { metadata: { name: 'counted-lock' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } } });
    await coord.replaceNamespacedLease({ name: 'counted-lock', namespace: 'web', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } } });
    assert.ok(pod.metadata?.uid);
    const r = sim.stats.snapshot().requests;
    const want = { 'list pods': 1, 'watch pods': 1, 'get pods': 2, 'patch pods': 1, 'patch pods/status': 1, 'create pods': 1, 'update pods': 1, 'delete pods': 1, 'create leases': 1, 'update leases': 1 };
    assert.deepEqual(Object.fromEntries(Object.keys(want).map((k) => [k, r[k] ?? 0])), want, JSON.stringify(r));
  });
});

function startSimApiClientWithToken(sim: SimApi, token: string): CoreV1Api {
  const kc = new KubeConfig();
  kc.loadFromString(sim.api.kubeconfig().replace(sim.api.token, token));
  return kc.makeApiClient(CoreV1Api);
}

const kubectlVersion = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
const kubectlFound = kubectlVersion.status === 0;
/** The client's minor version (Debian's kubernetes-client is 1.20; this machine's may be 1.32). */
const kubectlMinor = kubectlFound ? Number.parseInt((JSON.parse(kubectlVersion.stdout) as { clientVersion: { minor: string } }).clientVersion.minor, 10) : 0;

const skip = missing('kubectl');
describe('simulated kube-apiserver through the real kubectl', () => {
  let sim: ApiOnly;
  let core: CoreV1Api;
  const kubectl = (...args: string[]) =>
    run('kubectl', ['--kubeconfig', sim.kubeconfigPath, '--cache-dir', `${sim.dir}/cache`, '--request-timeout=20s', ...args], { timeout: 30_000, encoding: 'utf8' });

  before(async () => {
    if (skip) return;
    sim = await startApiOnly();
    core = sim.kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < 3; i++) await sim.putRunningPod(`demo-${i}`, { labels: { app: 'demo' } });
    await sim.putRunningPod('loner', { nodeName: '', labels: { app: 'other' } });
  });
  after(async () => {
    if (skip) return;
    await sim.close();
  });

  test('get prints the pod table a real cluster prints', { skip }, async () => {
    const { stdout } = await kubectl('get', 'pods');
    const lines = stdout.trim().split('\n');
    assert.match(lines[0]!, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    assert.match(lines[1]!, /^demo-0\s+1\/1\s+Running\s+0\s+\d+s$/);
    const wide = await kubectl('get', 'pods', '-o', 'wide', '-l', 'app in (demo)');
    assert.match(wide.stdout, /IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES/);
    assert.match(wide.stdout, /demo-2\s+1\/1\s+Running\s+0\s+\S+\s+10\.0\.0\.10\s+node-a\s+<none>\s+1\/1/);
  });

  test('get -o json returns the objects', { skip }, async () => {
    const { stdout } = await kubectl('get', 'pod', 'demo-1', '-o', 'json');
    const pod = JSON.parse(stdout) as V1Pod;
    assert.equal(pod.kind, 'Pod');
    assert.equal(pod.metadata!.name, 'demo-1');
    const list = JSON.parse((await kubectl('get', 'pods', '-o', 'json', '-l', 'app')).stdout) as { items: V1Pod[] };
    assert.equal(list.items.length, 4);
  });

  test('patch an image (strategic merge), then "(no change)" for the same patch', { skip }, async () => {
    const patch = '{"spec":{"containers":[{"name":"nginx","image":"nginx:1.25.3"}]}}';
    assert.equal((await kubectl('patch', 'pod', 'demo-0', '-p', patch)).stdout.trim(), 'pod/demo-0 patched');
    assert.equal(((await sim.getPod('demo-0'))!.spec as { containers: { image: string }[] }).containers[0]!.image, 'nginx:1.25.3');
    assert.equal((await kubectl('patch', 'pod', 'demo-0', '-p', patch)).stdout.trim(), 'pod/demo-0 patched (no change)');
  });

  test('a forbidden patch fails with the server message', { skip }, async () => {
    await assert.rejects(kubectl('patch', 'pod', 'demo-0', '-p', '{"spec":{"nodeName":"elsewhere"}}'), (err: { stderr: string }) => {
      assert.match(err.stderr, /The Pod "demo-0" is invalid: spec: Forbidden: pod updates may not change fields other than/);
      return true;
    });
  });

  test('label and annotate (merge patches), including removal', { skip }, async () => {
    assert.equal((await kubectl('label', 'pod', 'demo-1', 'tier=web')).stdout.trim(), 'pod/demo-1 labeled');
    assert.equal((await kubectl('annotate', 'pod', 'demo-1', 'note=hello')).stdout.trim(), 'pod/demo-1 annotated');
    let pod = (await sim.getPod('demo-1'))!;
    assert.equal(pod.metadata.labels!.tier, 'web');
    assert.equal(pod.metadata.annotations!.note, 'hello');
    await kubectl('label', 'pod', 'demo-1', 'tier-');
    pod = (await sim.getPod('demo-1'))!;
    assert.equal(pod.metadata.labels!.tier, undefined);
    assert.equal((await kubectl('get', 'pods', '-l', 'note', '-o', 'name')).stdout.trim(), '');
  });

  test('get -w prints the table, then a row per change', { skip }, async () => {
    const child = spawn('kubectl', ['--kubeconfig', sim.kubeconfigPath, '--cache-dir', `${sim.dir}/cache`, 'get', 'pods', '-w', '-l', 'app=demo'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const seen = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`kubectl get -w printed:\n${out}`)), 15_000);
        const check = () => {
          if (re.test(out)) {
            clearTimeout(timer);
            child.stdout.off('data', check);
            resolve();
          }
        };
        child.stdout.on('data', (d: Buffer) => {
          out += String(d);
          check();
        });
        check();
      });
    try {
      await seen(/demo-2\s+1\/1\s+Running/);
      await core.patchNamespacedPodStatus(
        { name: 'demo-2', namespace: 'default', body: { status: { conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [{ name: 'nginx', ready: false, restartCount: 1, image: 'x', imageID: 'y', state: { waiting: { reason: 'CrashLoopBackOff' } } }] } } },
        SMP,
      );
      await seen(/demo-2\s+0\/1\s+CrashLoopBackOff\s+1/);
    } finally {
      child.kill();
    }
  });

  test('delete an unscheduled pod: kubectl waits and reports it deleted', { skip }, async () => {
    assert.equal((await kubectl('delete', 'pod', 'loner')).stdout.trim(), 'pod "loner" deleted');
    assert.equal(await sim.getPod('loner'), undefined);
  });

  test('delete a scheduled pod with --wait=false leaves it Terminating', { skip }, async () => {
    await kubectl('delete', 'pod', 'demo-1', '--wait=false');
    assert.match((await kubectl('get', 'pod', 'demo-1')).stdout, /demo-1\s+1\/1\s+Terminating/);
  });

  test('apply and replace a manifest (server-side field validation, no client-side schemas needed)', { skip }, async () => {
    const file = join(sim.dir, 'pod.yaml');
    const manifest = (image: string, tier: string) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: manifest\n  labels: {app: manifest, tier: ${tier}}\nspec:\n  containers:\n  - name: c\n    image: ${image}\n`;
    // Before server-side field validation (1.25+), kubectl validates against /openapi/v2 schemas,
    // which the simulator does not publish.
    const validate = kubectlMinor >= 25 ? [] : ['--validate=false'];
    writeFileSync(file, manifest('nginx:1.14.2', 'one'));
    assert.equal((await kubectl('apply', ...validate, '-f', file)).stdout.trim(), 'pod/manifest created');
    writeFileSync(file, manifest('nginx:1.14.2', 'two'));
    assert.equal((await kubectl('apply', ...validate, '-f', file)).stdout.trim(), 'pod/manifest configured');
    // The ServiceAccount admission plugin gave the pod a token volume and its mounts: replacing
    // it with the bare manifest would remove them, a forbidden pod update.
    const created = (await sim.getPod('manifest'))!;
    const volume = (created.spec as { volumes: { name: string }[] }).volumes[0]!.name;
    assert.match(volume, /^kube-api-access-[b-df-hj-np-tv-z2-9]{5}$/);
    writeFileSync(file, manifest('nginx:1.25.3', 'two'));
    await assert.rejects(kubectl('replace', ...validate, '-f', file), (err: { stderr: string }) => {
      assert.match(err.stderr, /The Pod "manifest" is invalid: spec: Forbidden: pod updates may not change fields other than/);
      assert.ok(err.stderr.includes(`"${volume}"`), `the diff names the token volume: ${err.stderr}`);
      return true;
    });
    // Replacing it with the stored object, image changed, is an allowed update.
    const full = JSON.parse((await kubectl('get', 'pod', 'manifest', '-o', 'json')).stdout) as { spec: { containers: { image: string }[] } };
    full.spec.containers[0]!.image = 'nginx:1.25.3';
    writeFileSync(file, JSON.stringify(full));
    assert.equal((await kubectl('replace', ...validate, '-f', file)).stdout.trim(), 'pod/manifest replaced');
    const pod = (await sim.getPod('manifest'))!;
    assert.equal(pod.metadata.labels!.tier, 'two');
    assert.equal((pod.spec as { containers: { image: string }[] }).containers[0]!.image, 'nginx:1.25.3');
    assert.equal((pod.status as { phase: string }).phase, 'Pending');
  });

  test('a wrong token is refused', { skip }, async () => {
    await assert.rejects(kubectl('get', 'pods', '--token', 'wrong'), (err: { stderr: string }) => {
      assert.match(err.stderr, /Unauthorized|must be logged in/);
      return true;
    });
  });
});
