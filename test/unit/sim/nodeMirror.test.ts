// A node whose registry mirror lacks an image (fixture `nodes[].missingImages`): pulls of that
// image fail on that node only, as on a cluster whose regional mirror has not synced a new tag.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KwaveError } from '../../../src/errors.js';
import { parseFixture } from '../../../src/sim/fixture.js';
import { ImageTable } from '../../../src/sim/images.js';
import { Kubelet } from '../../../src/sim/kubelet.js';
import { Store } from '../../../src/sim/store.js';
import { buildWorld } from '../../../src/sim/world.js';
import { containerStatus, patchImage, waitForPod } from './kubeletHelpers.js';

const FIXTURE = `
nodes:
  - { name: node-a, zone: a }
  - { name: node-b, zone: b, missingImages: ["docker.io/library/nginx:1.25.3"] }
workloads:
  - name: web
    replicas: 2
    containers: [{ name: nginx, image: "nginx:1.14.2" }]
`;

describe('sim: a node whose registry mirror lacks an image', () => {
  test('pulls of it fail with ErrImagePull on that node only; other images pull there', async () => {
    const fixture = parseFixture(FIXTURE);
    assert.deepEqual(fixture.nodes[1]!.missingImages, ['docker.io/library/nginx:1.25.3']);
    const store = new Store();
    const images = new ImageTable(fixture.images);
    const missingImages = Object.fromEntries(fixture.nodes.map((n) => [n.name, n.missingImages ?? []]));
    const kubelet = new Kubelet({ store, images, timeScale: 0.01, seed: 3, missingImages });
    kubelet.start();
    try {
      buildWorld(store, kubelet, images, fixture);
      assert.equal((store.get('pods', 'default', 'web-1')!.spec as { nodeName: string }).nodeName, 'node-b');
      // The short spelling of the same image is missing too.
      patchImage(store, 'default', 'web-0', 'nginx', 'nginx:1.25.3');
      patchImage(store, 'default', 'web-1', 'nginx', 'nginx:1.25.3');
      const ok = await waitForPod(
        store,
        'default',
        'web-0',
        (p) => containerStatus(p).image.endsWith(':1.25.3') && containerStatus(p).ready,
      );
      assert.equal(containerStatus(ok).restartCount, 1);
      const failed = await waitForPod(
        store,
        'default',
        'web-1',
        (p) => containerStatus(p).state.waiting?.reason === 'ErrImagePull',
      );
      assert.match(
        containerStatus(failed).state.waiting!.message!,
        /failed to pull and unpack image "docker\.io\/library\/nginx:1\.25\.3": .*not found/,
      );
      // Back to an image the node has: it runs again.
      patchImage(store, 'default', 'web-1', 'nginx', 'nginx:1.14.2');
      await waitForPod(
        store,
        'default',
        'web-1',
        (p) => containerStatus(p).image.endsWith(':1.14.2') && containerStatus(p).ready,
      );
    } finally {
      kubelet.stop();
    }
  });

  test('a name that is no image reference is a fixture error with its place', () => {
    assert.throws(
      () => parseFixture('nodes:\n  - { name: n1, missingImages: ["Not An Image"] }\n', 'f.yaml'),
      (err: unknown) =>
        err instanceof KwaveError &&
        err.code === 'FIXTURE' &&
        /invalid reference format/.test(err.message) &&
        err.pos?.line === 2,
    );
  });
});
