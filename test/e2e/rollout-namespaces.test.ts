// A plan over two namespaces (`namespaces: [a, b]`) through the real `kwave run`: the pods of
// both are selected and upgraded, a third namespace's pods with the same labels are not, and the
// rollout record and the Lease live in the first namespace only; the budget (maxUnavailable) is one
// number for both namespaces together, counted by the cluster (/sim/stats maxNotReadyTotal).
// Read back through the API.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import { exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
nodes:
  - { name: node-1, zone: zone-a }
  - { name: node-2, zone: zone-b }
workloads:
  - { name: web, namespace: a, replicas: 3, labels: { app: demo }, containers: [{ name: nginx, image: "nginx:1.14.2" }], nodes: [node-1, node-2] }
  - { name: web, namespace: b, replicas: 2, labels: { app: demo }, containers: [{ name: nginx, image: "nginx:1.14.2" }], nodes: [node-1, node-2] }
  - { name: web, namespace: c, replicas: 2, labels: { app: demo }, containers: [{ name: nginx, image: "nginx:1.14.2" }], nodes: [node-1, node-2] }
`;

describe('kwave run: a plan over several namespaces', () => {
  test('namespaces [a, b]: both upgraded, c untouched, one budget over both; record and Lease in a', async () => {
    const fleet = await startFleet({ fixture: FIXTURE });
    try {
      const doc = parse(planYaml({ name: 'two-ns', waves: '[1, "100%"]', concurrency: 4, maxUnavailable: 2 })) as {
        spec: { target: Record<string, unknown> };
      };
      delete doc.spec.target.namespace;
      doc.spec.target.namespaces = ['a', 'b'];
      const plan = await fleet.writePlan('two-ns.yaml', stringify(doc));
      await fleet.resetStats();
      const run = fleet.start(['run', plan]);
      const exit = await exitOf(run);
      assert.equal(exit.code, 0, run.stderr());
      // Concurrency 4 would allow 2 per namespace at once if the budget were counted per namespace.
      const stats = await fleet.stats();
      assert.ok(stats.maxNotReadyTotal <= 2, `at most 2 not Ready over a and b together: ${JSON.stringify(stats)}`);
      assert.equal(
        stats.maxNotReadyTotal,
        2,
        `the budget was used, so the bound could have been broken: ${JSON.stringify(stats)}`,
      );
      assert.equal(stats.maxNotReady.c ?? 0, 0, 'c never drained');
      for (const ns of ['a', 'b']) {
        const pods = await fleet.pods('demo', ns);
        assert.equal(pods.size, ns === 'a' ? 3 : 2);
        for (const [name, p] of pods) {
          assert.equal(p.imageID, NEW_ID, `${ns}/${name}`);
          assert.equal(p.restartCount, 1, `${ns}/${name}`);
        }
      }
      for (const [name, p] of await fleet.pods('demo', 'c')) {
        assert.equal(p.imageID, OLD_ID, `c/${name} not selected`);
        assert.equal(p.restartCount, 0, `c/${name}`);
      }
      const kc = new KubeConfig();
      kc.loadFromFile(fleet.kubeconfig);
      const core = kc.makeApiClient(CoreV1Api);
      const names = async (ns: string) =>
        (await core.listNamespacedConfigMap({ namespace: ns })).items.map((c) => c.metadata!.name);
      assert.ok((await names('a')).includes('kwave-two-ns'), 'the record is in a');
      assert.equal((await names('b')).includes('kwave-two-ns'), false, 'and not in b');
      const leases = kc.makeApiClient(CoordinationV1Api);
      assert.ok(
        (await leases.listNamespacedLease({ namespace: 'a' })).items.some((l) => l.metadata!.name === 'kwave-two-ns'),
        'the Lease is in a',
      );
      assert.equal((await leases.listNamespacedLease({ namespace: 'b' })).items.length, 0);
      const status = await fleet.status(plan);
      assert.equal(status.phase, 'Completed');
    } finally {
      await fleet.close();
    }
  });
});
