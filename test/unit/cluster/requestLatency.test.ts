// Each request's latency as kwave sees it (send to answer), for kwave_kube_request_duration_seconds:
// against the simulated API server with 60 ms added to every answer; a watch is counted, not timed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { Cluster } from '../../../src/cluster/cluster.js';
import type { RequestRecord } from '../../../src/cluster/requestCounter.js';
import { startSim } from '../../../src/sim/index.js';

describe('Cluster request latency', () => {
  test('a get and a patch carry their time to the answer; a watch none', async () => {
    const sim = await startSim({ pods: 1 });
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    const cluster = new Cluster(kc);
    const seen: RequestRecord[] = [];
    cluster.requests.onRequest((r) => seen.push(r));
    try {
      sim.faults.latencyMs = 60;
      await cluster.getPod('default', 'demo-0');
      await cluster.patchPod('default', 'demo-0', { metadata: { labels: { timed: 'yes' } } });
      const watch = await cluster.watchPods(
        'default',
        {},
        () => undefined,
        () => undefined,
      );
      watch.abort();
      const byVerb = new Map(seen.map((r) => [r.verb, r]));
      for (const verb of ['get', 'patch'] as const) {
        const s = byVerb.get(verb)?.seconds;
        assert.ok(s !== undefined && s >= 0.055 && s < 10, `${verb}: ${s} s`);
      }
      assert.equal(byVerb.get('watch')?.code, '200');
      assert.equal(byVerb.get('watch')?.seconds, undefined);
    } finally {
      cluster.close();
      await sim.close();
    }
  });
});
