// What the real kubelets are given: the simulator's image table as their catalog, and their flags.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ImageTable } from '../../../../src/sim/images.js';
import { kubeletArgs, kubeletCatalog, nodeLabels } from '../../../../src/sim/real/kubeletConfig.js';

const table = new ImageTable({
  'nginx:1.25.3': {},
  'nginx:1.25.3-retag': { digestOf: 'nginx:1.25.3' },
  'nginx:broken': { pull: 'fail' },
  'crashy:1': { crash: true, pullSeconds: 2 },
  'slow:1': { readyAfterSeconds: 5 },
});

describe('kubeletCatalog', () => {
  const catalog = kubeletCatalog(table, { pullMs: 50 }, 2, { 'sim-node-1': ['nginx:1.25.3'] });

  test('carries every image under its containerd name, with its digest and failure modes', () => {
    const byName = new Map(catalog.images.map((i) => [i.name, i]));
    const nginx = byName.get('docker.io/library/nginx:1.25.3')!;
    assert.equal(nginx.repository, 'docker.io/library/nginx');
    assert.equal(nginx.digest, table.lookup('nginx:1.25.3')!.digest);
    assert.equal(byName.get('docker.io/library/nginx:1.25.3-retag')!.digest, nginx.digest);
    assert.equal(byName.get('docker.io/library/nginx:broken')!.pullFails, true);
    assert.equal(byName.get('docker.io/library/crashy:1')!.crash, true);
    assert.equal(byName.get('docker.io/library/crashy:1')!.pullMs, 2000);
    assert.equal(byName.get('docker.io/library/slow:1')!.readyAfterMs, 5000);
    assert.equal('readyAfterMs' in nginx, false, 'an image not declared slow is ready once it runs');
  });

  test("takes the fixture's timings over the defaults, and the time scale and missing images as given", () => {
    assert.deepEqual(catalog.timing, { pullMs: 50, startMs: 100, stopMs: 200, crashMs: 300 });
    assert.equal(catalog.timeScale, 2);
    assert.deepEqual(catalog.missingImages, { 'sim-node-1': ['nginx:1.25.3'] });
  });
});

describe('kubeletArgs', () => {
  const args = kubeletArgs({
    node: { name: 'sim-node-2', zone: 'zone-b', labels: { team: 'web' } },
    index: 1,
    rootDir: '/d/sim-node-2',
    catalogPath: '/d/images.json',
    bootstrapKubeconfig: '/d/bootstrap.kubeconfig',
    port: 40123,
    maxPods: 110,
    leaseDurationSeconds: 4,
    statusUpdateMs: 2000,
  });

  test("gives the node the simulated node's pod CIDR and labels", () => {
    assert.ok(args.includes('--pod-cidr=10.101.0.0/16'));
    assert.ok(
      args.includes('--node-labels=topology.kubernetes.io/region=sim,topology.kubernetes.io/zone=zone-b,team=web'),
    );
  });

  test('heartbeats as the control plane expects them', () => {
    assert.ok(args.includes('--lease-duration-seconds=4'));
    assert.ok(args.includes('--node-status-update-frequency=2000ms'));
  });

  test("sizes the node as the simulated node: the fixture's CPU and memory, else 8 and 32Gi", () => {
    assert.ok(args.includes('--cpu=8') && args.includes('--memory=32Gi'));
    const sized = kubeletArgs({
      node: { name: 'small', capacity: { cpu: '1500m', memory: '8Gi' } },
      index: 0,
      rootDir: '/d/small',
      catalogPath: '/d/images.json',
      bootstrapKubeconfig: '/d/bootstrap.kubeconfig',
      port: 40124,
      maxPods: 110,
      leaseDurationSeconds: 4,
      statusUpdateMs: 2000,
    });
    assert.ok(sized.includes('--cpu=1500m') && sized.includes('--memory=8Gi'));
  });

  test('a node without a zone has no zone label', () => {
    assert.deepEqual(nodeLabels({ name: 'n' }), { 'topology.kubernetes.io/region': 'sim' });
  });
});
