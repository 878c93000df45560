// The simulated kubelet as pre-pull needs it (shared by both backends): a pod with restartPolicy
// Never whose command exits at once pulls its image, runs, ends Succeeded (Ready False,
// PodCompleted), and the node's status.images then lists the image; a second pod on the same
// node finds it present (pull time paid once per node).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultDigest } from '../../../src/sim/images.js';
import type { KubeObject } from '../../../src/sim/store.js';
import { podManifest } from '../../../src/sim/world.js';
import { condition, containerStatus, eventsFor, harness, waitForPod } from './kubeletHelpers.js';

function puller(name: string, image: string, node: string): KubeObject {
  const pod = podManifest(
    {
      namespace: 'default',
      name,
      replicas: 1,
      labels: { 'kwave.dev/pre-pull': 'p' },
      containers: [{ name: 'pull-0', image }],
    },
    0,
    node,
  );
  const spec = pod.spec as { restartPolicy: string; containers: Record<string, unknown>[] };
  spec.restartPolicy = 'Never';
  spec.containers[0]!.command = ['/bin/true'];
  return { ...pod, metadata: { ...pod.metadata, name } };
}

describe('kubelet: a run-to-completion puller pod', () => {
  test('pulls, exits 0, Succeeded with Ready False (PodCompleted); the node reports the image; the next pod finds it present', async () => {
    const h = harness(1);
    try {
      h.store.create('pods', puller('pull-a', 'nginx:1.25.3', 'sim-node-1'));
      const done = await waitForPod(
        h.store,
        'default',
        'pull-a',
        (p) => (p.status as { phase?: string } | undefined)?.phase === 'Succeeded',
      );
      const s = containerStatus(done, 'pull-0');
      assert.equal(s.state.terminated?.exitCode, 0);
      assert.equal(s.state.terminated?.reason, 'Completed');
      assert.equal(s.imageID, `docker.io/library/nginx@${defaultDigest('docker.io/library/nginx:1.25.3')}`);
      assert.deepEqual([condition(done, 'Ready')?.status, condition(done, 'Ready')?.reason], ['False', 'PodCompleted']);
      assert.equal(s.restartCount, 0, 'restartPolicy Never: not restarted');
      const node = h.store.get('nodes', undefined, 'sim-node-1')!;
      const images = (node.status as { images?: { names: string[] }[] }).images ?? [];
      assert.ok(
        images.some((i) => i.names.includes('docker.io/library/nginx:1.25.3')),
        JSON.stringify(images),
      );
      assert.ok(
        eventsFor(h.store, 'default', 'pull-a').some(
          (e) => e.reason === 'Pulled' && String(e.message).startsWith('Successfully pulled image "nginx:1.25.3"'),
        ),
      );

      h.store.create('pods', puller('pull-b', 'nginx:1.25.3', 'sim-node-1'));
      await waitForPod(
        h.store,
        'default',
        'pull-b',
        (p) => (p.status as { phase?: string } | undefined)?.phase === 'Succeeded',
      );
      assert.ok(
        eventsFor(h.store, 'default', 'pull-b').some(
          (e) => e.reason === 'Pulled' && e.message === 'Container image "nginx:1.25.3" already present on machine',
        ),
      );
    } finally {
      h.close();
    }
  });
});
