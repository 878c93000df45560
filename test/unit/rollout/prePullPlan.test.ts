// Pre-pull's pure part: which nodes lack which images (node status.images), the puller pod, and
// reading a puller's status.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { nodeHasImage, prePullPlan, pullerName, pullerPod, pullVerdict } from '../../../src/rollout/prePullPlan.js';
import { makePod } from '../inplace/fixtures.js';

const CONTAINERS = [{ name: 'nginx', image: 'nginx:1.25.3' }];

function pod(name: string, node: string, extra: Partial<NonNullable<V1Pod['spec']>> = {}, namespace = 'web'): V1Pod {
  const p = makePod({ name, namespace });
  p.spec = { ...p.spec!, nodeName: node, ...extra };
  return p;
}

const node = (name: string, images: string[][] = []): V1Node => ({
  metadata: { name },
  status: { images: images.map((names) => ({ names, sizeBytes: 1 })) },
});

describe('prePullPlan', () => {
  test('one target per node hosting a pod; nodes whose status.images list the image are skipped', () => {
    const nodes = new Map([
      ['n1', node('n1', [['docker.io/library/nginx@sha256:' + 'b'.repeat(64), 'docker.io/library/nginx:1.25.3']])],
      ['n2', node('n2', [['docker.io/library/nginx:1.14.2']])],
    ]);
    const plan = prePullPlan([pod('a', 'n2'), pod('b', 'n1'), pod('c', 'n2'), pod('d', 'n3')], CONTAINERS, (n) =>
      nodes.get(n),
    );
    assert.deepEqual(
      plan.targets.map((t) => [t.node, t.images]),
      [
        ['n2', ['nginx:1.25.3']],
        ['n3', ['nginx:1.25.3']],
      ],
    );
    assert.deepEqual(plan.skipped, ['n1']);
  });
  test("tolerations of the node's pods are copied (once each); pull secrets of the puller's namespace only", () => {
    const t1 = { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' };
    const t2 = { key: 'spot', operator: 'Exists', effect: 'NoExecute' };
    const plan = prePullPlan(
      [
        pod('a', 'n1', { tolerations: [t1], imagePullSecrets: [{ name: 'reg' }] }),
        pod('b', 'n1', { tolerations: [t1, t2] }),
        pod('c', 'n1', { imagePullSecrets: [{ name: 'other' }] }, 'zz'),
      ],
      CONTAINERS,
      () => undefined,
    );
    assert.equal(plan.targets.length, 1);
    assert.deepEqual(plan.targets[0]!.tolerations, [t1, t2]);
    assert.deepEqual(plan.targets[0]!.imagePullSecrets, ['reg']);
    assert.equal(plan.targets[0]!.namespace, 'web');
  });
  test('pods on no node, and containers already at the target, pull nothing', () => {
    const unscheduled = makePod({ name: 'u' });
    const atTarget = pod('t', 'n1');
    atTarget.spec!.containers[0]!.image = 'docker.io/library/nginx:1.25.3';
    assert.deepEqual(
      prePullPlan([unscheduled, atTarget], CONTAINERS, () => undefined),
      { targets: [], skipped: ['n1'] },
    );
  });
  test('nodeHasImage matches a tag by name and a digest reference by digest', () => {
    const n = node('n', [['docker.io/library/nginx@sha256:' + 'b'.repeat(64), 'docker.io/library/nginx:1.25.3']]);
    assert.equal(nodeHasImage(n, 'nginx:1.25.3'), true);
    assert.equal(nodeHasImage(n, `nginx@sha256:${'b'.repeat(64)}`), true);
    assert.equal(nodeHasImage(n, 'nginx:1.25.4'), false);
    assert.equal(nodeHasImage(undefined, 'nginx:1.25.3'), false);
  });
});

describe('the puller pod', () => {
  const target = {
    node: 'sim-node-1',
    namespace: 'web',
    images: ['nginx:1.25.3', 'envoy:1'],
    tolerations: [{ key: 'k', operator: 'Exists' }],
    imagePullSecrets: ['reg'],
  };
  test('nodeName set, one container per image running a command that exits at once, restartPolicy Never, zero requests, labelled, owned by the record', () => {
    const p = pullerPod('web', 2, target, { name: 'kwave-web', uid: 'u-1', namespace: 'web' }) as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown>;
    };
    assert.equal(p.metadata.name, pullerName('web', 2, 'sim-node-1'));
    assert.deepEqual(p.metadata.labels, {
      'app.kubernetes.io/managed-by': 'kwave',
      'kwave.dev/plan': 'web',
      'kwave.dev/pre-pull': 'web',
    });
    assert.deepEqual(p.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'kwave-web', uid: 'u-1' },
    ]);
    assert.equal(p.spec.nodeName, 'sim-node-1');
    assert.equal(p.spec.restartPolicy, 'Never');
    assert.deepEqual(p.spec.tolerations, target.tolerations);
    assert.deepEqual(p.spec.imagePullSecrets, [{ name: 'reg' }]);
    const containers = p.spec.containers as {
      name: string;
      image: string;
      command: string[];
      resources: { requests: Record<string, string> };
    }[];
    assert.deepEqual(
      containers.map((c) => [c.name, c.image, c.command.join(' '), c.resources.requests]),
      [
        ['pull-0', 'nginx:1.25.3', '/bin/true', { cpu: '0', memory: '0' }],
        ['pull-1', 'envoy:1', '/bin/true', { cpu: '0', memory: '0' }],
      ],
    );
  });
  test('no owner reference across namespaces; names stay DNS labels', () => {
    const p = pullerPod('web', 1, target, { name: 'kwave-web', uid: 'u', namespace: 'other' }) as {
      metadata: Record<string, unknown>;
    };
    assert.equal(p.metadata.ownerReferences, undefined);
    const long = pullerName('a'.repeat(63), 12, 'node');
    assert.ok(long.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(long), long);
  });
});

describe('pullVerdict', () => {
  const puller = (statuses: NonNullable<V1Pod['status']>['containerStatuses']): V1Pod => ({
    spec: { containers: [{ name: 'pull-0', image: 'nginx:1.25.3' }] },
    status: { containerStatuses: statuses },
  });
  test('pending until the kubelet reports the image; pulled once it ran (or has its imageID)', () => {
    assert.equal(pullVerdict(puller(undefined)).kind, 'pending');
    assert.equal(
      pullVerdict(
        puller([
          {
            name: 'pull-0',
            image: 'nginx:1.25.3',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ContainerCreating' } },
          },
        ]),
      ).kind,
      'pending',
    );
    assert.equal(
      pullVerdict(
        puller([
          {
            name: 'pull-0',
            image: 'x',
            imageID: 'docker.io/library/nginx@sha256:1',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed' } },
          },
        ]),
      ).kind,
      'pulled',
    );
    // A command the image lacks fails to start, but the image was pulled.
    assert.equal(
      pullVerdict(
        puller([
          {
            name: 'pull-0',
            image: 'x',
            imageID: 'docker.io/library/nginx@sha256:1',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 128, reason: 'StartError' } },
          },
        ]),
      ).kind,
      'pulled',
    );
  });
  test('a pull error is a failure, with the image and the kubelet message', () => {
    const v = pullVerdict(
      puller([
        {
          name: 'pull-0',
          image: 'nginx:1.25.3',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ErrImagePull', message: 'not found' } },
        },
      ]),
    );
    assert.deepEqual(v, { kind: 'failed', image: 'nginx:1.25.3', reason: 'ErrImagePull', message: 'not found' });
  });
});
