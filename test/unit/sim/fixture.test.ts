import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KwaveError } from '../../../src/errors.js';
import { defaultFixture, loadFixture, parseFixture } from '../../../src/sim/fixture.js';
import { defaultDigest, ImageTable, parseImageRef } from '../../../src/sim/images.js';
import type { PodCondition } from '../../../src/sim/podStatus.js';
import { condition, containerStatus, harness, waitForPod } from './kubeletHelpers.js';

const EXAMPLE = 'test/fixtures/sim/example.yaml';

function fixtureError(text: string): KwaveError {
  try {
    parseFixture(text, 'f.yaml');
  } catch (err) {
    assert.ok(err instanceof KwaveError, `expected a KwaveError, got ${String(err)}`);
    assert.equal(err.code, 'FIXTURE');
    assert.equal(err.exitCode, 2);
    return err;
  }
  assert.fail('the fixture was accepted');
}

describe('image references', () => {
  test('are normalized as the container runtime does', () => {
    const cases: [string, string][] = [
      ['nginx', 'docker.io/library/nginx:latest'],
      ['nginx:1.25.3', 'docker.io/library/nginx:1.25.3'],
      ['bitnami/nginx:1', 'docker.io/bitnami/nginx:1'],
      ['registry.k8s.io/pause:3.9', 'registry.k8s.io/pause:3.9'],
      ['localhost:5000/app:v1', 'localhost:5000/app:v1'],
      [`nginx@sha256:${'a'.repeat(64)}`, `docker.io/library/nginx@sha256:${'a'.repeat(64)}`],
    ];
    for (const [ref, full] of cases) {
      const parsed = parseImageRef(ref);
      assert.ok(!('error' in parsed), ref);
      assert.equal(parsed.fullName, full, ref);
    }
  });

  test('invalid names are refused', () => {
    for (const ref of ['NGINX:1', 'nginx:', 'nginx:bad tag', 'nginx@sha256:xyz', '', 'a//b'])
      assert.ok('error' in parseImageRef(ref), ref);
  });

  test('the default table: sha256 of the name, a retag with the same digest, failure modes', () => {
    const table = new ImageTable(defaultFixture(1).images);
    const old = table.lookup('nginx:1.14.2')!;
    assert.equal(old.digest, defaultDigest('docker.io/library/nginx:1.14.2'));
    assert.match(old.digest, /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(table.lookup('nginx:1.25.3')!.digest, old.digest);
    assert.equal(table.lookup('nginx:1.14.2-retag')!.digest, old.digest);
    assert.equal(table.lookup('docker.io/library/nginx:broken')!.pullFails, true);
    assert.equal(table.lookup('nginx:crash')!.crash, true);
    assert.equal(table.lookup('nginx:slow')!.readyAfterMs, 30_000);
    assert.equal(table.lookup('nginx:errors')!.errorRate, 0.5);
    assert.equal(table.lookup('nginx:9.9'), undefined);
    // A digest reference finds the tag with that digest.
    assert.equal(table.lookup(`nginx@${old.digest}`)?.digest, old.digest);
  });
});

describe('fixture files', () => {
  test('the example parses with its defaults filled in', async () => {
    const f = await loadFixture(EXAMPLE);
    assert.equal(f.nodes.length, 3);
    assert.equal(f.workloads.length, 4);
    const [web, legacy, api] = f.workloads;
    assert.deepEqual(web!.readinessGate, { conditionType: 'kwave.dev/in-place-ready', condition: 'True' });
    assert.deepEqual(legacy!.readinessGate, { conditionType: 'kwave.dev/in-place-ready', condition: 'absent' });
    assert.equal(api!.readinessGate, undefined);
    assert.deepEqual(api!.labels, { app: 'api' });
    assert.equal(f.seed, 42);
    assert.equal(f.timing.pullSeconds, 0.2);
    const table = new ImageTable(f.images);
    assert.equal(table.lookup('nginx:1.25.3-alpine')!.digest, table.lookup('nginx:1.25.3')!.digest);
    assert.equal(table.lookup('registry.example.com/team/api:2.0.0')!.digest, `sha256:${'0123456789abcdef'.repeat(4)}`);
  });

  test('an empty fixture is the default nodes and images, with no workloads', () => {
    const f = parseFixture('{}\n');
    assert.deepEqual(
      f.nodes.map((n) => n.zone),
      ['zone-a', 'zone-b', 'zone-c'],
    );
    assert.ok('nginx:1.25.3' in f.images);
    assert.deepEqual(f.workloads, []);
  });

  test('an unknown field is reported at its key, with line and column', () => {
    const err = fixtureError('nodes:\n  - name: n1\n    zoen: a\n');
    assert.deepEqual(err.pos, { file: 'f.yaml', line: 3, col: 5, path: 'nodes.0' });
    assert.match(err.message, /unknown field "zoen"/);
  });

  test('a wrong type names the path and what was expected', () => {
    const err = fixtureError(
      'workloads:\n  - name: web\n    replicas: many\n    containers: [{ name: c, image: nginx }]\n',
    );
    assert.equal(err.pos?.line, 3);
    assert.equal(err.pos?.col, 15);
    assert.match(err.message, /workloads\.0\.replicas: expected an integer/);
  });

  test('a misspelt readiness gate field is reported as such, not as "expected false"', () => {
    const err = fixtureError(
      'workloads:\n  - name: web\n    replicas: 1\n    containers: [{ name: c, image: nginx }]\n    readinessGate: { conditon: "True" }\n',
    );
    assert.match(err.message, /^unknown field "conditon"/);
    assert.equal(err.pos?.line, 5);
  });

  test('workload kinds: a DaemonSet has no replicas, others need them; owner and updateStrategy only where they mean something', () => {
    const c = 'containers: [{ name: c, image: nginx }]';
    assert.match(
      fixtureError(`workloads:\n  - name: ds\n    kind: DaemonSet\n    replicas: 2\n    ${c}\n`).message,
      /a DaemonSet runs one pod per node: leave replicas out/,
    );
    assert.match(
      fixtureError(`workloads:\n  - name: d\n    kind: Deployment\n    ${c}\n`).message,
      /workload "d" needs replicas/,
    );
    assert.match(
      fixtureError(
        `workloads:\n  - name: d\n    kind: Deployment\n    replicas: 1\n    owner: { kind: ReplicaSet }\n    ${c}\n`,
      ).message,
      /a Deployment owns its pods itself: owner is for kind Pods only/,
    );
    assert.match(
      fixtureError(
        `workloads:\n  - name: d\n    kind: Deployment\n    replicas: 1\n    updateStrategy: OnDelete\n    ${c}\n`,
      ).message,
      /updateStrategy is for a StatefulSet or a DaemonSet, not Deployment/,
    );
    const f = parseFixture(
      `nodes: [{ name: a }, { name: b }]\nworkloads:\n  - name: ds\n    kind: DaemonSet\n    ${c}\n  - name: s\n    kind: StatefulSet\n    replicas: 2\n    ${c}\n`,
    );
    assert.deepEqual(
      f.workloads.map((w) => [w.kind, w.replicas, w.updateStrategy]),
      [
        ['DaemonSet', 2, 'RollingUpdate'],
        ['StatefulSet', 2, 'RollingUpdate'],
      ],
    );
  });

  test('every problem is listed, the first with its position', () => {
    const err = fixtureError(
      'nodes:\n  - name: n1\n  - name: n1\nworkloads:\n  - name: w\n    replicas: 1\n    nodes: [zz]\n    containers: [{ name: c, image: nginx }]\n',
    );
    assert.deepEqual([err.pos?.line, err.pos?.col], [3, 11]);
    assert.match(err.message, /node "n1" is declared twice/);
    assert.match(err.message, /f\.yaml:7:13 node "zz" is not declared in nodes/);
  });

  test('image table mistakes: a bad name, an unknown digestOf', () => {
    const err = fixtureError('images:\n  nginx:1: {}\n  Nginx:2: {}\n  nginx:3: { digestOf: "nginx:4" }\n');
    assert.match(err.message, /image "Nginx:2": couldn't parse image name/);
    assert.match(err.message, /digestOf "nginx:4" is not in the image table/);
    assert.equal(err.pos?.line, 3);
  });

  test('invalid YAML and duplicate keys are reported with their position', () => {
    assert.equal(fixtureError('nodes: [\n').pos?.file, 'f.yaml');
    const dup = fixtureError('seed: 1\nseed: 2\n');
    assert.equal(dup.pos?.line, 2);
  });

  test('PodDisruptionBudgets: the example declares one; both rules at once, a bad percentage or a duplicate are refused with their position', async () => {
    const f = await loadFixture(EXAMPLE);
    assert.deepEqual(f.podDisruptionBudgets, [
      { namespace: 'web', name: 'web-pdb', selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 },
    ]);
    const both = fixtureError(
      'podDisruptionBudgets:\n  - { name: p, selector: {}, minAvailable: 1, maxUnavailable: 1 }\n',
    );
    assert.equal(both.pos?.line, 2);
    const over = fixtureError('podDisruptionBudgets:\n  - name: p\n    selector: {}\n    minAvailable: "120%"\n');
    assert.match(over.message, /120%: must not be greater than 100%/);
    assert.equal(over.pos?.line, 4);
    const bad = fixtureError('podDisruptionBudgets:\n  - { name: p, selector: {}, maxUnavailable: "ten" }\n');
    assert.match(bad.message, /maxUnavailable/);
    const dup = fixtureError('podDisruptionBudgets:\n  - { name: p, selector: {} }\n  - { name: p, selector: {} }\n');
    assert.match(dup.message, /PodDisruptionBudget "p" in namespace "default" is declared twice/);
  });

  test('a missing file is a FIXTURE error too', async () => {
    await assert.rejects(
      loadFixture('test/fixtures/sim/no-such-file.yaml'),
      (err: unknown) => err instanceof KwaveError && err.code === 'FIXTURE',
    );
  });
});

describe('the world built from a fixture', () => {
  test('namespaces, zones, owners, gates as declared; failing images start Pending and fail', async () => {
    const f = await loadFixture(EXAMPLE);
    const h = harness(0, f);
    try {
      const { store } = h;
      assert.deepEqual(
        store.list('namespaces').map((n) => n.metadata.name),
        ['api', 'default', 'kube-node-lease', 'kube-public', 'kube-system', 'web'],
      );
      const node = store.get('nodes', undefined, 'node-c1')!;
      assert.equal(node.metadata.labels?.['topology.kubernetes.io/zone'], 'eu-1c');
      assert.equal(node.metadata.labels?.pool, 'batch');
      const web = store.get('pods', 'web', 'web-5')!;
      assert.equal(web.metadata.ownerReferences?.[0]?.kind, 'ReplicaSet');
      assert.equal(web.metadata.labels?.['pod-template-hash']?.length, 10);
      assert.equal(condition(web, 'Ready')?.status, 'True');
      const legacy = store.get('pods', 'web', 'legacy-0')!;
      assert.equal(condition(legacy, 'Ready')?.reason, 'ReadinessGatesNotReady');
      const api = store.get('pods', 'api', 'api-2')!;
      assert.equal((api.spec as { readinessGates?: unknown }).readinessGates, undefined);
      assert.equal((api.spec as { nodeName: string }).nodeName, 'node-a1');
      assert.equal(
        containerStatus(api, 'api').imageID,
        `registry.example.com/team/api@sha256:${'0123456789abcdef'.repeat(4)}`,
      );
      assert.equal(condition(api, 'Ready')?.status, 'True');
      const canary = await waitForPod(
        store,
        'api',
        'canary-0',
        (p) => containerStatus(p, 'api').state.waiting?.reason === 'ErrImagePull',
      );
      assert.equal((canary.status as { phase: string }).phase, 'Pending');
      assert.ok(
        ((canary.status as { conditions: PodCondition[] }).conditions ?? []).some(
          (c) => c.type === 'PodScheduled' && c.status === 'True',
        ),
      );
    } finally {
      h.close();
    }
  });
});
