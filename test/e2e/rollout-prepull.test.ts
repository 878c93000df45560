// Image pre-pull (strategy.prePull) on both backends. The same fixture, a 3 s pull: upgraded
// without pre-pull each pod is drained while its node pulls; with it the images are on the nodes
// before the wave drains anything, so each pod is not Ready only for its container's start and
// readiness. The figures are the simulator's (/sim/stats unreadySeconds), the kubelet's Events
// say why (`Successfully pulled` in the pod vs `already present on machine`). A pull error on one
// node fails the wave before any pod is drained: no pod touched, no puller left.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { realNotBuilt } from './helpers/backend.js';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';

const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
nodes:
  - { name: node-1, zone: zone-a }
  - { name: node-2, zone: zone-b }
  - { name: node-3, zone: zone-c }
  - { name: node-4, zone: zone-c, missingImages: ["nginx:1.25.5"] }
images:
  nginx:1.14.2: {}
  nginx:1.25.3: { pullSeconds: 3 }
  nginx:1.25.4: { pullSeconds: 3 }
  nginx:1.25.5: { pullSeconds: 3 }
workloads:
  - { name: web, replicas: 4, labels: { app: web }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
timing: { jitter: 0 }
`;

const figures: Record<string, { p50: number; p95: number; max: number }> = {};

describe('kwave run with strategy.prePull', { skip: realNotBuilt }, () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ fixture: FIXTURE, timeScale: 1 });
  });
  after(async () => {
    // The two figures, for the report (the assertions below do not rest on their size).
    console.log(
      `# unreadySeconds (3 s pull): prePull off ${JSON.stringify(figures.off)}, on ${JSON.stringify(figures.on)}`,
    );
    await fleet?.close();
  });

  const pulledEvents = async (image: string) =>
    (await fleet.events('default')).filter(
      (e) => e.reason === 'Pulled' && e.involvedObject?.name?.startsWith('web-') && e.message?.includes(image),
    );

  test('without pre-pull each pod is drained while its node pulls', async () => {
    const plan = await fleet.writePlan(
      'off.yaml',
      planYaml({
        name: 'off',
        app: 'web',
        image: 'nginx:1.25.3',
        waves: '["100%"]',
        concurrency: 4,
        maxUnavailable: 4,
        podTimeout: '120s',
      }),
    );
    await fleet.resetStats();
    const run = fleet.start(['run', plan]);
    assert.equal((await exitOf(run)).code, 0, run.stderr() + run.stdout().slice(-2000));
    figures.off = (await fleet.stats()).unreadySeconds.default!;
    const pulled = await pulledEvents('nginx:1.25.3');
    assert.equal(
      pulled.filter((e) => e.message!.startsWith('Successfully pulled')).length,
      4,
      'every pod pulled its image while drained',
    );
  });

  test('with pre-pull the images are on the nodes before any pod is drained; the drained window shrinks', async () => {
    const plan = await fleet.writePlan(
      'on.yaml',
      planYaml({
        name: 'on',
        app: 'web',
        image: 'nginx:1.25.4',
        waves: '["100%"]',
        concurrency: 4,
        maxUnavailable: 4,
        podTimeout: '120s',
        prePull: true,
        prePullConcurrency: 2,
      }),
    );
    await fleet.resetStats();
    const run = fleet.start(['run', plan]);
    assert.equal((await exitOf(run)).code, 0, run.stderr() + run.stdout().slice(-2000));
    figures.on = (await fleet.stats()).unreadySeconds.default!;
    const end = run.events.find((e) => e.event === 'prepull-end');
    assert.ok(end && end.event === 'prepull-end' && end.ok, JSON.stringify(end));
    assert.deepEqual([...end.pulled].sort(), ['node-1', 'node-2', 'node-3', 'node-4']);
    // Every pull finished before the first pod started.
    const firstStart = run.events.findIndex((e) => e.event === 'pod-start');
    assert.ok(run.events.indexOf(end) < firstStart);
    const inPods = await pulledEvents('nginx:1.25.4');
    assert.equal(inPods.length, 4);
    assert.ok(
      // Newer kubelets (1.37 here) add "and can be accessed by the pod" (docs/sim.md).
      inPods.every((e) =>
        /^Container image "nginx:1\.25\.4" already present on machine( and can be accessed by the pod)?$/.test(
          e.message ?? '',
        ),
      ),
      JSON.stringify(inPods.map((e) => e.message)),
    );
    // Nodes report the image, and the pullers are gone.
    const kc = new KubeConfig();
    kc.loadFromFile(fleet.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const listsImage = (n: V1Node) =>
      (n.status?.images ?? []).some((i) => i.names?.includes('docker.io/library/nginx:1.25.4'));
    // The real kubelet reports status.images from an image list it refreshes every 30 s
    // (docs/sim.md, where the simulated kubelet differs): wait up to two refreshes for it.
    let nodes = (await core.listNode()).items;
    for (let tries = 0; tries < 70 && !nodes.every(listsImage); tries++) {
      await new Promise((r) => setTimeout(r, 1000));
      nodes = (await core.listNode()).items;
    }
    assert.equal(nodes.length, 4);
    assert.ok(nodes.every(listsImage), 'status.images of every node lists the image');
    assert.deepEqual(
      (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'kwave.dev/pre-pull' })).items.map(
        (p) => p.metadata?.name,
      ),
      [],
      'no puller left',
    );
    assert.ok(
      figures.on.p50 < figures.off!.p50,
      `p50 unready with pre-pull ${figures.on.p50}s, without ${figures.off!.p50}s`,
    );
  });

  test('a pull error on one node fails the wave before any pod is drained', async () => {
    const before = await fleet.pods('web');
    const plan = await fleet.writePlan(
      'bad.yaml',
      planYaml({
        name: 'bad',
        app: 'web',
        image: 'nginx:1.25.5',
        waves: '["100%"]',
        concurrency: 4,
        maxUnavailable: 4,
        podTimeout: '120s',
        prePull: true,
      }),
    );
    await fleet.resetStats();
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 3, run.stderr() + run.stdout().slice(-2000));
    const end = endOf(run);
    assert.equal(end.phase, 'Halted');
    assert.match(end.message, /pre-pull on node node-4: nginx:1\.25\.5: (ErrImagePull|ImagePullBackOff)/);
    assert.equal(run.events.filter((e) => e.event === 'pod-start').length, 0, 'no pod started');
    const after = await fleet.pods('web');
    for (const [name, p] of before)
      assert.deepEqual([after.get(name)!.image, after.get(name)!.ready], [p.image, p.ready], name);
    const stats = await fleet.stats();
    assert.equal(stats.requests['patch pods'] ?? 0, 0, 'no pod patched');
    assert.equal(stats.requests['patch pods/status'] ?? 0, 0, 'no gate closed');
    assert.equal(stats.maxNotReady.default ?? 0, 0);
  });
});
