// spec.owners through the built CLI, on either backend, with the fixture of real workloads
// (test/fixtures/sim/workloads.yaml: a Deployment, an OnDelete and a RollingUpdate StatefulSet,
// an OnDelete and a RollingUpdate DaemonSet). On the real backend their controllers made the pods;
// on the embedded one the pods were seeded with the same owners and nothing reconciles them, so
// what needs a controller (a deleted pod coming back) is asserted on the real backend only.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppsV1Api, CoreV1Api, KubeConfig, type V1Pod, type V1StatefulSet } from '@kubernetes/client-node';
import { join } from 'node:path';
import { BACKEND } from './helpers/backend.js';
import { jsonEvents, kwaveCli, ROOT, startWorld, type World } from './helpers/metricsRun.js';

const FIXTURE = join(ROOT, 'test/fixtures/sim/workloads.yaml');
const onlyReal =
  BACKEND === 'real'
    ? false
    : 'needs real controllers: the embedded backend stores workloads but runs no controllers (a deleted pod is not recreated)';

function plan(name: string, apps: string[], owners?: 'warn' | 'update'): string {
  return [
    'apiVersion: kwave.dev/v1alpha1',
    'kind: RolloutPlan',
    `metadata: { name: ${name} }`,
    'spec:',
    `  target: { namespace: default, selector: { matchExpressions: [{ key: app, operator: In, values: [${apps.join(', ')}] }] } }`,
    '  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }',
    '  strategy: { waves: ["100%"], concurrency: 2, maxUnavailable: 4 }',
    ...(owners ? [`  owners: ${owners}`] : []),
    '',
  ].join('\n');
}

/** Polls `read` until it gives a value (generous bound: the box is shared and slow). */
async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe(`spec.owners with real workloads (${BACKEND} backend)`, () => {
  let world: World;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  const pods = async (app: string) =>
    (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${app}` })).items.filter(
      (p) => !p.metadata?.deletionTimestamp,
    );
  const nginx = (p: V1Pod) => p.status?.containerStatuses?.find((c) => c.name === 'nginx');
  let original: Map<string, { uid: string }>;

  before(async () => {
    world = await startWorld({ fixture: FIXTURE });
    const kc = new KubeConfig();
    kc.loadFromFile(world.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    apps = kc.makeApiClient(AppsV1Api);
  });
  after(async () => world?.close());

  test('the fixture made real workloads: pods owned through a ReplicaSet, StatefulSet ordinals, a DaemonSet pod on every node', async () => {
    const web = await pods('web');
    assert.equal(web.length, 3);
    const rsName = web[0]!.metadata!.ownerReferences![0]!.name;
    assert.ok(
      web.every(
        (p) =>
          p.metadata?.ownerReferences?.[0]?.kind === 'ReplicaSet' &&
          p.metadata.ownerReferences[0].controller === true &&
          p.metadata.ownerReferences[0].name === rsName,
      ),
    );
    const rs = await apps.readNamespacedReplicaSet({ namespace: 'default', name: rsName });
    assert.equal(rs.metadata?.ownerReferences?.[0]?.kind, 'Deployment');
    assert.equal(rs.metadata?.ownerReferences?.[0]?.name, 'web');
    assert.deepEqual((await pods('db')).map((p) => p.metadata!.name).sort(), ['db-0', 'db-1', 'db-2']);
    const agent = await pods('agent');
    assert.deepEqual(agent.map((p) => p.spec!.nodeName).sort(), ['sim-node-1', 'sim-node-2', 'sim-node-3']);
    assert.ok(agent.every((p) => p.metadata?.ownerReferences?.[0]?.kind === 'DaemonSet'));
    assert.equal(
      (await apps.readNamespacedStatefulSet({ namespace: 'default', name: 'db' })).spec?.updateStrategy?.type,
      'OnDelete',
    );
    assert.equal(
      (await apps.readNamespacedDaemonSet({ namespace: 'default', name: 'logs' })).spec?.updateStrategy?.type,
      'RollingUpdate',
    );
  });

  test('kwave plan shows each owner; warn says replacements would run the old image', async () => {
    const file = await world.writePlan('look', plan('look', ['web', 'db', 'agent']));
    const r = await kwaveCli(['plan', file, '--kubeconfig', world.kubeconfig, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const report = JSON.parse(r.stdout) as {
      owners: { kind: string; name: string; strategy?: string; pods: number; action: string }[];
      problems: { severity: string; message: string }[];
    };
    const byName = Object.fromEntries(
      report.owners.map((o) => [`${o.kind}/${o.name}`, [o.strategy, o.pods, o.action]]),
    );
    assert.deepEqual(byName, {
      'Deployment/web': ['RollingUpdate', 3, 'warn'],
      'StatefulSet/db': ['OnDelete', 3, 'warn'],
      'DaemonSet/agent': ['OnDelete', 3, 'warn'],
    });
    assert.ok(
      report.problems.some(
        (p) =>
          p.severity === 'warning' &&
          /^Deployment default\/web \(RollingUpdate\), owner of 3 selected pods: its pod template still names nginx nginx:1\.14\.2: pods it recreates .* will run the old image$/.test(
            p.message,
          ),
      ),
      JSON.stringify(report.problems),
    );
  });

  test('owners: update is refused for a Deployment: exit 2, a clear message, no pod touched', async (t) => {
    const file = await world.writePlan('web', plan('web', ['web'], 'update'));
    const r = await kwaveCli(['run', file, '--kubeconfig', world.kubeconfig, '--metrics-address', 'off']);
    t.diagnostic(r.stderr.trim());
    assert.equal(r.code, 2, r.stderr + r.stdout);
    assert.match(
      r.stderr,
      /refusing to run:\n {2}- owners: update refused for Deployment default\/web \(RollingUpdate\), owner of 3 selected pods: a change to a Deployment's pod template makes its controller roll out a new ReplicaSet and recreate every pod, undoing the in-place upgrade; change the Deployment through its own rollout, or use owners: warn/,
    );
    assert.ok((await pods('web')).every((p) => p.spec?.containers[0]?.image === 'nginx:1.14.2'));
    const rolling = await world.writePlan('cache', plan('cache', ['cache'], 'update'));
    const c = await kwaveCli(['plan', rolling, '--kubeconfig', world.kubeconfig]);
    assert.equal(c.code, 2);
    assert.match(
      c.stdout,
      /error {4}owners: update refused for StatefulSet default\/cache \(RollingUpdate\).*with updateStrategy RollingUpdate its controller deletes and recreates every pod/,
    );
  });

  test('owners: update: after the in-place rollout the OnDelete StatefulSet and DaemonSet templates name the new image; no pod was recreated', async () => {
    original = new Map(
      [...(await pods('db')), ...(await pods('agent'))].map((p) => [p.metadata!.name!, { uid: p.metadata!.uid! }]),
    );
    const file = await world.writePlan('db', plan('db', ['db', 'agent'], 'update'));
    const r = await kwaveCli(['run', file, '--kubeconfig', world.kubeconfig, '--metrics-address', 'off', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(
      r.stderr,
      /^kwave: owner StatefulSet default\/db: pod template set to nginx nginx:1\.25\.3: pods it recreates run the new image$/m,
    );
    assert.match(r.stderr, /^kwave: owner DaemonSet default\/agent: pod template set to nginx nginx:1\.25\.3/m);
    const end = jsonEvents(r.stdout).find((e) => e.event === 'rollout-end');
    assert.ok(end?.event === 'rollout-end' && end.phase === 'Completed');
    const sts = await apps.readNamespacedStatefulSet({ namespace: 'default', name: 'db' });
    assert.equal(sts.spec?.template.spec?.containers[0]?.image, 'nginx:1.25.3');
    assert.equal(sts.metadata?.generation, 2, 'one template change');
    assert.match(
      sts.metadata?.annotations?.['kwave.dev/in-place-owner'] ?? '',
      /"fromImage":"nginx:1\.14\.2","toImage":"nginx:1\.25\.3"/,
    );
    assert.equal(
      (await apps.readNamespacedDaemonSet({ namespace: 'default', name: 'agent' })).spec?.template.spec?.containers[0]
        ?.image,
      'nginx:1.25.3',
    );
    for (const p of [...(await pods('db')), ...(await pods('agent'))]) {
      assert.equal(p.metadata?.uid, original.get(p.metadata!.name!)?.uid, `${p.metadata?.name} is the same pod`);
      assert.equal(nginx(p)?.restartCount, 1, `${p.metadata?.name}: restarted once, in place`);
    }
  });

  test(
    'real controllers: the OnDelete template change restarts nothing; a deleted pod comes back on the new image (imageID from the cluster)',
    { skip: onlyReal },
    async (t) => {
      // The controller has seen the new template once it reports observedGeneration 2.
      const seen = await until('the StatefulSet controller to observe generation 2', async () => {
        const s = await apps.readNamespacedStatefulSet({ namespace: 'default', name: 'db' });
        return s.status?.observedGeneration === 2 ? s : undefined;
      });
      t.diagnostic(`StatefulSet status after the template change: ${JSON.stringify(seen.status)}`);
      assert.notEqual(
        seen.status?.updateRevision,
        seen.status?.currentRevision,
        'a new revision, the pods still labelled with the old one',
      );
      assert.equal(
        seen.status?.updatedReplicas ?? 0,
        0,
        'no pod counts as updated: their controller-revision-hash label is the old revision',
      );
      await core.deleteNamespacedPod({ namespace: 'default', name: 'db-1' });
      const target = world.sim.images.lookup('nginx:1.25.3')!;
      const back = await until('db-1 to come back running', async () => {
        const p = await core.readNamespacedPod({ namespace: 'default', name: 'db-1' });
        return p.metadata?.uid !== original.get('db-1')?.uid && nginx(p)?.state?.running ? p : undefined;
      });
      t.diagnostic(
        `db-1 back: uid ${back.metadata?.uid}, image ${nginx(back)?.image}, imageID ${nginx(back)?.imageID}, revision ${back.metadata?.labels?.['controller-revision-hash']}`,
      );
      assert.equal(back.spec?.containers[0]?.image, 'nginx:1.25.3');
      assert.equal(nginx(back)?.imageID, `${target.repository}@${target.digest}`);
      assert.equal(back.metadata?.labels?.['controller-revision-hash'], seen.status?.updateRevision);
      const after = await until('the StatefulSet status to count the replacement', async () => {
        const s: V1StatefulSet = await apps.readNamespacedStatefulSet({ namespace: 'default', name: 'db' });
        return s.status?.updatedReplicas === 1 ? s : undefined;
      });
      t.diagnostic(`StatefulSet status after the replacement: ${JSON.stringify(after.status)}`);
      // The other pods were not touched by the controller, before or after the replacement.
      for (const name of ['db-0', 'db-2']) {
        const p = await core.readNamespacedPod({ namespace: 'default', name });
        assert.equal(p.metadata?.uid, original.get(name)?.uid);
        assert.equal(nginx(p)?.restartCount, 1);
      }
    },
  );

  test('kwave rollback puts the templates back once the pods are reverted', async () => {
    const file = join(world.dir, 'db.yaml');
    const r = await kwaveCli(['rollback', file, '--kubeconfig', world.kubeconfig, '--metrics-address', 'off']);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stderr, /^kwave: owner StatefulSet default\/db: pod template put back to nginx nginx:1\.14\.2$/m);
    const sts = await apps.readNamespacedStatefulSet({ namespace: 'default', name: 'db' });
    assert.equal(sts.spec?.template.spec?.containers[0]?.image, 'nginx:1.14.2');
    assert.equal(sts.metadata?.annotations?.['kwave.dev/in-place-owner'], undefined);
    assert.equal(
      (await apps.readNamespacedDaemonSet({ namespace: 'default', name: 'agent' })).spec?.template.spec?.containers[0]
        ?.image,
      'nginx:1.14.2',
    );
  });
});
