// The run's Lease taken over by someone else mid-run, seen from the real `kwave run`: it notices
// at its next renewal, says so, stops like an interrupted run (exit 4), and leaves the pods
// resumable; a rerun, once the Lease is free, completes. Checked on the cluster.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import { exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

describe('kwave run: the lease lost mid-run', () => {
  test('another holder takes the Lease: exit 4 with the reason, wave 1 done, the rest untouched; a rerun completes', async () => {
    const fleet = await startFleet({ pods: 4 });
    try {
      const kc = new KubeConfig();
      kc.loadFromFile(fleet.kubeconfig);
      const leases = kc.makeApiClient(CoordinationV1Api);
      const plan = await fleet.writePlan(
        'leased.yaml',
        planYaml({ name: 'leased', waves: '[1, "100%"]', gates: [{ name: 'sign-off', approval: true }] }),
      );
      const run = fleet.start(['run', plan]);
      await run.waitFor((e) => e.event === 'gate-approval-wait', 'the approval wait after wave 1');

      // Someone else takes the Lease over (a PUT on the version kwave last wrote).
      const lease = await leases.readNamespacedLease({ name: 'kwave-leased', namespace: 'default' });
      assert.match(lease.spec?.holderIdentity ?? '', /./, 'kwave holds it');
      await leases.replaceNamespacedLease({
        name: 'kwave-leased',
        namespace: 'default',
        body: { ...lease, spec: { ...lease.spec, holderIdentity: 'someone-else' } },
      });

      const exit = await exitOf(run);
      assert.equal(exit.code, 4, run.stderr());
      assert.match(run.stderr(), /lost the lease default\/kwave-leased: another runner took it over; stopping/);
      const pods = await fleet.pods();
      assert.equal([...pods.values()].filter((p) => p.imageID === NEW_ID).length, 1, 'wave 1 was done');
      assert.equal(
        [...pods.values()].filter((p) => p.imageID === OLD_ID && p.restartCount === 0).length,
        3,
        'the rest untouched',
      );
      for (const [name, p] of pods) assert.equal(p.gate, 'True', `${name} in service`);
      const taken = await leases.readNamespacedLease({ name: 'kwave-leased', namespace: 'default' });
      assert.equal(taken.spec?.holderIdentity, 'someone-else', 'kwave did not take the lease back or clear it');

      // The other holder lets go; the rerun resumes and, approved, completes.
      await leases.deleteNamespacedLease({ name: 'kwave-leased', namespace: 'default' });
      const rerun = fleet.start(['run', plan]);
      await rerun.waitFor((e) => e.event === 'gate-approval-wait', 'the approval wait of the rerun');
      const approved = await fleet.kwave(['approve', plan]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.equal((await exitOf(rerun)).code, 0, rerun.stderr());
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.imageID, NEW_ID, name);
        assert.equal(p.restartCount, 1, `${name}: upgraded once`);
      }
    } finally {
      await fleet.close();
    }
  });
});
