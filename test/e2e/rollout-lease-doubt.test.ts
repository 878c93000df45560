// The API server gone for longer than the Lease's renew deadline, mid-wave, seen from the real
// `kwave run`: the Lease is in doubt, not lost — kwave holds its writes back, says so, confirms the
// Lease once the server answers (nobody could take it over meanwhile) and completes the rollout.
// Checked on the cluster: every pod upgraded once, in service, and the Lease released.
//
// Embedded backend: the API server answers every request 503 for 20 s (its faults). Real
// backend: kube-apiserver is restarted (refused connections for about 10–15 s here); a restart
// quicker than the 12 s deadline leaves the Lease held throughout, so there the doubt lines are
// checked only when they appear. An outage longer than the node grace period (8 s) also makes the
// real node-lifecycle controller mark every node NotReady for a while: kwave then leaves the
// pods of those nodes (exit 5), and, as its message says, the plan is run again once the nodes
// are back.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { endOf, exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';
import { NEW_ID } from './helpers/images.js';

const OUTAGE_MS = 20_000;
const NODES_BACK_MS = 120_000;

/** Resolves once every node reports Ready (a bound, not a sleep). */
async function nodesReady(kc: KubeConfig): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const deadline = Date.now() + NODES_BACK_MS;
  for (;;) {
    const nodes = (await core.listNode()).items;
    if (nodes.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))) return;
    assert.ok(Date.now() < deadline, `nodes still not Ready after ${NODES_BACK_MS / 1000}s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

describe('kwave run: the API server gone for longer than the renew deadline', () => {
  test('the Lease is in doubt, writes wait, it is confirmed once the server answers, and the rollout completes with each pod upgraded once', async () => {
    const fleet = await startFleet({ pods: 4 });
    try {
      const plan = await fleet.writePlan(
        'outage.yaml',
        planYaml({ name: 'outage', waves: '[1, "100%"]', concurrency: 1, maxUnavailable: 1 }),
      );
      const run = fleet.start(['run', plan]);
      // Mid-wave: wave 2's first pod has started (its writes go out, or wait, through the outage).
      await run.waitFor((e) => e.event === 'pod-start' && e.wave === 2, "wave 2's first pod start");
      const embedded = fleet.sim.embedded;
      if (embedded) {
        embedded.faults.errorCodes = [503];
        embedded.faults.errorRate = 1;
        await new Promise((r) => setTimeout(r, OUTAGE_MS));
        embedded.faults.errorRate = 0;
      } else {
        await fleet.sim.real!.controlPlane.restartApiServer();
      }

      const kc = new KubeConfig();
      kc.loadFromFile(fleet.kubeconfig);
      const exit = await exitOf(run);
      if (!embedded && exit.code === 5) {
        // The nodes were marked NotReady by the outage: run the plan again once they are back.
        assert.match(endOf(run).message, /left for a node that cannot act/);
        await nodesReady(kc);
        const again = fleet.start(['run', plan]);
        assert.equal((await exitOf(again)).code, 0, again.stderr());
      } else {
        assert.equal(
          exit.code,
          0,
          `exit ${exit.code} ${exit.signal ?? ''}\n${run.stderr()}\n${run.stdout().slice(-3000)}`,
        );
      }
      const doubt =
        /could not renew the lease default\/kwave-outage within 12s: [^\n]*; pod and record writes wait until it is confirmed ours again/;
      const confirmed =
        /the lease default\/kwave-outage is confirmed ours again after \d+s in doubt \(nobody took it over\); writes go on/;
      if (embedded || doubt.test(run.stderr())) {
        assert.match(run.stderr(), doubt);
        assert.match(run.stderr(), confirmed);
        assert.ok(run.stderr().search(doubt) < run.stderr().search(confirmed), 'in doubt first, then confirmed');
      }
      assert.doesNotMatch(run.stderr(), /lost the lease/);

      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.imageID, NEW_ID, `${name} on the new image`);
        assert.equal(p.restartCount, 1, `${name}: upgraded once`);
        assert.equal(p.gate, 'True', `${name} in service`);
      }
      const lease = await kc
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ name: 'kwave-outage', namespace: 'default' });
      assert.equal(lease.spec?.holderIdentity, undefined, 'the Lease released at the end');
    } finally {
      await fleet.close();
    }
  });
});
