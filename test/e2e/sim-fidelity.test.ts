// Fidelity of the simulated kube-apiserver, driven as kwave drives a real one: through
// @kubernetes/client-node 1.4 (the real kubectl: sim-kubectl.test.ts). The first suite runs on both
// backends, so every answer it pins is checked against kube-apiserver on the real pass.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
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
import { putRunningPod, startSimApi, type SimApi } from './helpers/simApi.js';
import type { ApiOnly } from './helpers/apiOnly.js';
import { startApi, type Api } from './helpers/clusterApi.js';
import { BACKEND, embeddedOnly } from './helpers/backend.js';
import { selectedRelease } from './helpers/controlPlane.js';

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
  object: {
    kind?: string;
    code?: number;
    reason?: string;
    message?: string;
    metadata?: { name?: string; resourceVersion?: string; labels?: Record<string, string> };
  };
}

/** Runs a watch until `until` says it has seen enough (or the server ends it); returns the events. */
function watchUntil(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  until: (events: WatchEvent[]) => boolean,
  timeoutMs = 8000,
): Promise<{ events: WatchEvent[]; ended: boolean; error?: unknown }> {
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
    new Watch(kc)
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

/** Namespace web with 12 running pods over three nodes and tiers (web-00 the canary), through the API. */
async function webPods(api: Api): Promise<void> {
  await api.namespace('web');
  const tiers = ['front', 'back', 'db'];
  for (let i = 0; i < 12; i++) {
    await api.api.putRunningPod(`web-${String(i).padStart(2, '0')}`, {
      namespace: 'web',
      nodeName: `node-${i % 3}`,
      labels: { app: 'web', tier: tiers[i % 3]!, ...(i === 0 ? { canary: 'true' } : {}) },
    });
  }
}

// Both backends: the same requests against the embedded API server and kube-apiserver (no
// kubelet: pods are placed through the API, as a kubelet would have reported them).
describe('kube-apiserver semantics through @kubernetes/client-node', () => {
  let api: Api;
  let sim: ApiOnly;
  let core: CoreV1Api;
  let coord: CoordinationV1Api;

  before(async () => {
    api = await startApi();
    sim = api.api;
    core = sim.kc.makeApiClient(CoreV1Api);
    coord = sim.kc.makeApiClient(CoordinationV1Api);
    await webPods(api);
  });
  after(async () => {
    await api?.close();
  });

  test('403 Forbidden without a token (system:anonymous), 401 Unauthorized with a wrong one', async () => {
    const noToken = await new Promise<{ code: number; body: string }>((resolve, reject) => {
      const cluster = sim.kc.getCurrentCluster()!;
      const req = request(
        `${cluster.server}/api/v1/namespaces/web/pods`,
        { ca: Buffer.from(cluster.caData!, 'base64') },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += String(d)));
          res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    // No credentials: kube-apiserver (anonymous auth on, RBAC) takes it as system:anonymous and forbids it.
    assert.equal(noToken.code, 403, noToken.body);
    assert.deepEqual(JSON.parse(noToken.body), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "web"',
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    });
    // client-node drops the body of a 401 (its generated code throws before reading it).
    const wrong = clientWithToken(sim.kc, 'not-the-token');
    await assert.rejects(
      wrong.listNamespacedPod({ namespace: 'web' }),
      (err: unknown) => err instanceof ApiException && err.code === 401,
    );
  });

  test('list with set-based label selectors and a field selector', async () => {
    const names = async (labelSelector?: string, fieldSelector?: string) =>
      (await core.listNamespacedPod({ namespace: 'web', labelSelector, fieldSelector })).items.map(
        (p) => p.metadata!.name,
      );
    assert.deepEqual(await names('app in (web),tier notin (db),!canary'), [
      'web-01',
      'web-03',
      'web-04',
      'web-06',
      'web-07',
      'web-09',
      'web-10',
    ]);
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
        await core.patchNamespacedPod(
          { name: 'web-11', namespace: 'web', body: { metadata: { labels: { paged: 'yes' } } } },
          MERGE,
        );
      }
    } while (cont);
    assert.equal(pages, 3);
    assert.deepEqual(
      seen,
      Array.from({ length: 12 }, (_, i) => `web-${String(i).padStart(2, '0')}`),
    );
    assert.equal(versions.size, 1);
  });

  test('watch resumes from a list resourceVersion and delivers changes in order', async () => {
    const list = await core.listNamespacedPod({ namespace: 'web' });
    const rv = list.metadata!.resourceVersion!;
    await core.patchNamespacedPod(
      { name: 'web-01', namespace: 'web', body: { metadata: { labels: { step: '1' } } } },
      MERGE,
    );
    await core.patchNamespacedPod(
      { name: 'web-02', namespace: 'web', body: { metadata: { labels: { step: '2' } } } },
      MERGE,
    );
    const { events } = await watchUntil(
      sim.kc,
      '/api/v1/namespaces/web/pods',
      { resourceVersion: rv },
      (ev) => ev.length >= 2,
    );
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata?.name}`),
      ['MODIFIED web-01', 'MODIFIED web-02'],
    );
    assert.ok(
      Number(events[1]!.object.metadata!.resourceVersion) > Number(events[0]!.object.metadata!.resourceVersion),
    );
  });

  test('watch without a resourceVersion starts with ADDED for each existing object', async () => {
    const { events } = await watchUntil(
      sim.kc,
      '/api/v1/namespaces/web/pods',
      { labelSelector: 'tier=db' },
      (ev) => ev.length >= 4,
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'ADDED', 'ADDED', 'ADDED'],
    );
  });

  test('a label change out of a watch selector arrives as DELETED', async () => {
    const rv = (await core.listNamespacedPod({ namespace: 'web' })).metadata!.resourceVersion!;
    await core.patchNamespacedPod(
      { name: 'web-03', namespace: 'web', body: { metadata: { labels: { tier: 'db' } } } },
      MERGE,
    );
    const { events } = await watchUntil(
      sim.kc,
      '/api/v1/namespaces/web/pods',
      { resourceVersion: rv, labelSelector: 'tier=front' },
      (ev) => ev.length >= 1,
    );
    assert.equal(events[0]!.type, 'DELETED');
    assert.equal(events[0]!.object.metadata!.name, 'web-03');
    assert.equal(events[0]!.object.metadata!.labels!.tier, 'front', 'the last state that matched');
  });

  test('409 Conflict on a stale update and on a stale resourceVersion inside a patch', async () => {
    const pod = await core.readNamespacedPod({ name: 'web-05', namespace: 'web' });
    await core.patchNamespacedPod(
      { name: 'web-05', namespace: 'web', body: { metadata: { labels: { touched: 'yes' } } } },
      MERGE,
    );
    const stale = await refused(core.replaceNamespacedPod({ name: 'web-05', namespace: 'web', body: pod }), 409);
    assert.equal(stale.reason, 'Conflict');
    assert.equal(
      stale.message,
      'Operation cannot be fulfilled on pods "web-05": the object has been modified; please apply your changes to the latest version and try again',
    );
    const guarded = await refused(
      core.patchNamespacedPod(
        {
          name: 'web-05',
          namespace: 'web',
          body: {
            metadata: { resourceVersion: pod.metadata!.resourceVersion },
            spec: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] },
          },
        },
        SMP,
      ),
      409,
    );
    assert.equal(guarded.reason, 'Conflict');
    // Without a version the patch applies.
    await core.patchNamespacedPod(
      { name: 'web-05', namespace: 'web', body: { metadata: { labels: { again: 'yes' } } } },
      MERGE,
    );
  });

  test('strategic merge patches a container image by name and leaves the other container alone', async () => {
    await sim.putRunningPod('two', {
      namespace: 'web',
      containers: [
        { name: 'app', image: 'nginx:1.14.2' },
        { name: 'sidecar', image: 'busybox:1.36' },
      ],
    });
    const patched = await core.patchNamespacedPod(
      { name: 'two', namespace: 'web', body: { spec: { containers: [{ name: 'app', image: 'nginx:1.25.3' }] } } },
      SMP,
    );
    assert.deepEqual(
      patched.spec!.containers.map((c) => `${c.name}=${c.image}`),
      ['app=nginx:1.25.3', 'sidecar=busybox:1.36'],
    );
    const missingKey = await refused(
      core.patchNamespacedPod({ name: 'two', namespace: 'web', body: { spec: { containers: [{ image: 'i' }] } } }, SMP),
      500,
    );
    assert.equal(missingKey.message, 'map: map[image:i] does not contain declared merge key: name');
    // client-node's default patch type is JSON patch.
    const jp = await core.patchNamespacedPod({
      name: 'two',
      namespace: 'web',
      body: [{ op: 'replace', path: '/spec/containers/1/image', value: 'busybox:1.37' }],
    });
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
      // Removing the only container also leaves the pod without one: that error comes first, in a list.
      const message =
        what === 'removed container'
          ? /^Pod "web-06" is invalid: \[spec\.containers: Required value, spec\.containers: Forbidden: pod updates may not add or remove containers\]$/
          : /^Pod "web-06" is invalid: spec(\.containers)?: Forbidden: pod updates may not /;
      assert.match(s.message, message);
      assert.deepEqual(
        s.details!.causes!.map((c) => c.reason),
        what === 'removed container' ? ['FieldValueRequired', 'FieldValueForbidden'] : ['FieldValueForbidden'],
      );
    });
  }

  test('status sent to pods is ignored; spec sent to pods/status is ignored; condition types are checked', async () => {
    const main = await core.patchNamespacedPod(
      { name: 'web-07', namespace: 'web', body: { status: { phase: 'Failed' }, metadata: { labels: { m: '1' } } } },
      MERGE,
    );
    assert.equal(main.status!.phase, 'Running');
    assert.equal(main.metadata!.labels!.m, '1');
    const st = await core.patchNamespacedPodStatus(
      {
        name: 'web-07',
        namespace: 'web',
        body: {
          spec: { containers: [{ name: 'nginx', image: 'nginx:9' }] },
          status: { conditions: [{ type: 'kwave.dev/in-place-ready', status: 'False' }] },
        },
      },
      SMP,
    );
    assert.equal(st.spec!.containers[0]!.image, 'nginx:1.14.2');
    const gate = st.status!.conditions!.find((c) => c.type === 'kwave.dev/in-place-ready');
    assert.equal(gate!.status, 'False');
    assert.equal(st.status!.conditions!.length, 3, 'merged by type, others kept');
    const bad = await refused(
      core.patchNamespacedPodStatus(
        {
          name: 'web-07',
          namespace: 'web',
          body: { status: { conditions: [{ type: 'not valid!', status: 'True' }] } },
        },
        SMP,
      ),
      422,
    );
    assert.equal(
      bad.message.replace(/conditions\[\d\]/, 'conditions[i]'),
      `Pod "web-07" is invalid: status.conditions[i].Type: Invalid value: "not valid!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
  });

  test('create via POST: Pending/BestEffort status, generateName, AlreadyExists, Invalid name', async () => {
    const body: V1Pod = {
      metadata: { generateName: 'gen-' },
      spec: { containers: [{ name: 'c', image: 'nginx:1.14.2' }] },
    };
    const created = await core.createNamespacedPod({ namespace: 'web', body });
    assert.match(created.metadata!.name!, /^gen-[a-z0-9]{5}$/);
    assert.equal(created.status!.phase, 'Pending');
    assert.equal(created.status!.qosClass, 'BestEffort');
    const dup = await refused(
      core.createNamespacedPod({ namespace: 'web', body: { ...body, metadata: { name: created.metadata!.name } } }),
      409,
    );
    assert.equal(dup.reason, 'AlreadyExists');
    const badName = await refused(
      core.createNamespacedPod({ namespace: 'web', body: { ...body, metadata: { name: 'Not_Valid' } } }),
      422,
    );
    assert.equal(badName.reason, 'Invalid');
    const missing = await refused(core.readNamespacedPod({ name: 'nope', namespace: 'web' }), 404);
    assert.equal(missing.message, 'pods "nope" not found');
  });

  test('delete: a scheduled pod gets deletionTimestamp and stays; an unscheduled one goes at once', async () => {
    const graceful = await core.deleteNamespacedPod({ name: 'web-08', namespace: 'web' });
    assert.ok(graceful.metadata!.deletionTimestamp);
    assert.equal(graceful.metadata!.deletionGracePeriodSeconds, 30);
    assert.ok(await sim.getPod('web-08', 'web'), 'still there: no kubelet has finished it');
    await sim.putRunningPod('unscheduled', { namespace: 'web', nodeName: '' });
    await core.deleteNamespacedPod({ name: 'unscheduled', namespace: 'web' });
    assert.equal(await sim.getPod('unscheduled', 'web'), undefined);
  });

  test('leases: create, PUT without resourceVersion is 422, stale PUT is 409, fresh PUT works', async () => {
    const lease = await coord.createNamespacedLease({
      namespace: 'web',
      body: { metadata: { name: 'kwave-lock' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
    });
    const noRv = await refused(
      coord.replaceNamespacedLease({
        name: 'kwave-lock',
        namespace: 'web',
        body: { metadata: { name: 'kwave-lock' }, spec: { holderIdentity: 'b' } },
      }),
      422,
    );
    // Go printed the empty resourceVersion as 0x0 up to 1.33 (the simulator's model), as 0 in 1.37.
    const printed = BACKEND === 'real' && selectedRelease().minor !== '1.33' ? '0' : '0x0';
    assert.equal(
      noRv.message,
      `leases.coordination.k8s.io "kwave-lock" is invalid: metadata.resourceVersion: Invalid value: ${printed}: must be specified for an update`,
    );
    const renewed = await coord.replaceNamespacedLease({
      name: 'kwave-lock',
      namespace: 'web',
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
    });
    assert.equal(renewed.spec!.holderIdentity, 'b');
    const stale = await refused(
      coord.replaceNamespacedLease({ name: 'kwave-lock', namespace: 'web', body: lease }),
      409,
    );
    assert.equal(
      stale.message,
      'Operation cannot be fulfilled on leases.coordination.k8s.io "kwave-lock": the object has been modified; please apply your changes to the latest version and try again',
    );
  });
});

// Embedded only: what needs the simulator's own knobs (a 200-change watch window, a 200 ms
// bookmark interval, injected faults, its own request counts). kube-apiserver's watch window is
// etcd's compaction and its bookmarks come about once a minute; it has no fault injection, and its
// request counts come from the audit log after the fact.
describe(
  'simulated kube-apiserver: watch window, bookmarks, faults, request counts',
  {
    skip: embeddedOnly("needs the simulator's own watch window, bookmark interval, injected faults and request counts"),
  },
  () => {
    let sim: SimApi;
    let core: CoreV1Api;
    let coord: CoordinationV1Api;

    before(async () => {
      sim = await startSimApi({ historySize: 200, bookmarkIntervalMs: 200 });
      core = sim.kc.makeApiClient(CoreV1Api);
      coord = sim.kc.makeApiClient(CoordinationV1Api);
      sim.store.create('namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'web' },
        status: { phase: 'Active' },
      });
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

    test('a watch from a version older than the window gets ERROR 410 Expired; so does an old continue token', async () => {
      const firstPage = await core.listNamespacedPod({ namespace: 'web', limit: 2 });
      const old = firstPage.metadata!.resourceVersion!;
      for (let i = 0; i < 210; i++) {
        await core.patchNamespacedPod(
          { name: 'web-04', namespace: 'web', body: { metadata: { annotations: { n: String(i) } } } },
          MERGE,
        );
      }
      const { events, ended } = await watchUntil(
        sim.kc,
        '/api/v1/namespaces/web/pods',
        { resourceVersion: old },
        () => false,
      );
      assert.equal(ended, true, 'the server closes the stream after the error');
      assert.equal(events.length, 1);
      assert.equal(events[0]!.type, 'ERROR');
      assert.equal(events[0]!.object.code, 410);
      assert.equal(events[0]!.object.reason, 'Expired');
      assert.match(events[0]!.object.message!, new RegExp(`^too old resource version: ${old} \\(\\d+\\)$`));
      const expired = await refused(
        core.listNamespacedPod({ namespace: 'web', limit: 2, _continue: firstPage.metadata!._continue }),
        410,
      );
      assert.equal(expired.reason, 'Expired');
    });

    test('bookmarks carry only kind, apiVersion and resourceVersion; timeoutSeconds ends cleanly', async () => {
      const rv = (await core.listNamespacedPod({ namespace: 'web' })).metadata!.resourceVersion!;
      const { events, ended, error } = await watchUntil(
        sim.kc,
        '/api/v1/namespaces/web/pods',
        { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 1 },
        () => false,
      );
      assert.equal(ended, true);
      assert.equal(error ?? null, null);
      const bookmarks = events.filter((e) => e.type === 'BOOKMARK');
      assert.ok(bookmarks.length >= 1);
      assert.deepEqual(Object.keys(bookmarks[0]!.object).sort(), ['apiVersion', 'kind', 'metadata']);
      assert.deepEqual(Object.keys(bookmarks[0]!.object.metadata!), ['resourceVersion']);
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
      assert.equal(
        (await refused(core.readNamespacedPod({ name: 'web-09', namespace: 'web' }), 503)).reason,
        'ServiceUnavailable',
      );
      sim.faults.errorRate = 0;
      sim.faults.watchCutSeconds = 1;
      try {
        const rv = (await core.listNamespacedPod({ namespace: 'web' })).metadata!.resourceVersion!;
        const { ended } = await watchUntil(
          sim.kc,
          '/api/v1/namespaces/web/pods',
          { resourceVersion: rv },
          () => false,
          6000,
        );
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
      await watchUntil(sim.kc, '/api/v1/namespaces/web/pods', { labelSelector: 'app=counted' }, (ev) => ev.length >= 1);
      const pod = await core.readNamespacedPod({ name: 'counted', namespace: 'web' });
      await core.patchNamespacedPod(
        { name: 'counted', namespace: 'web', body: { metadata: { labels: { touched: '1' } } } },
        MERGE,
      );
      await core.patchNamespacedPodStatus(
        {
          name: 'counted',
          namespace: 'web',
          body: { status: { conditions: [{ type: 'kwave.dev/in-place-ready', status: 'False' }] } },
        },
        SMP,
      );
      await core.createNamespacedPod({
        namespace: 'web',
        body: { metadata: { name: 'counted-2' }, spec: { containers: [{ name: 'c', image: 'nginx:1.14.2' }] } },
      });
      const fresh = await core.readNamespacedPod({ name: 'counted', namespace: 'web' });
      await core.replaceNamespacedPod({
        name: 'counted',
        namespace: 'web',
        body: { ...fresh, metadata: { ...fresh.metadata, labels: { ...fresh.metadata!.labels, replaced: '1' } } },
      });
      await core.deleteNamespacedPod({ name: 'counted-2', namespace: 'web' });
      const lease = await coord.createNamespacedLease({
        namespace: 'web',
        body: { metadata: { name: 'counted-lock' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
      });
      await coord.replaceNamespacedLease({
        name: 'counted-lock',
        namespace: 'web',
        body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
      });
      assert.ok(pod.metadata?.uid);
      const r = sim.stats.snapshot().requests;
      const want = {
        'list pods': 1,
        'watch pods': 1,
        'get pods': 2,
        'patch pods': 1,
        'patch pods/status': 1,
        'create pods': 1,
        'update pods': 1,
        'delete pods': 1,
        'create leases': 1,
        'update leases': 1,
      };
      assert.deepEqual(Object.fromEntries(Object.keys(want).map((k) => [k, r[k] ?? 0])), want, JSON.stringify(r));
    });
  },
);

/** A client of the same server with another bearer token. */
function clientWithToken(kc: KubeConfig, token: string): CoreV1Api {
  const other = new KubeConfig();
  other.loadFromString(kc.exportConfig());
  const user = other.getCurrentUser() as { token?: string } | null;
  if (!user) throw new Error('the kubeconfig has no current user');
  user.token = token;
  return other.makeApiClient(CoreV1Api);
}
