// The Cluster sends every request through its token bucket: against the simulated API server,
// with the clock frozen and sleep recorded, the waits are exactly the bucket's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { Cluster } from '../../../src/cluster/cluster.js';
import { startSim } from '../../../src/sim/index.js';

describe('Cluster rate limit', () => {
  test('requests beyond the burst wait 1/qps each, in turn, through the injected sleep', async () => {
    const sim = await startSim({ pods: 2 });
    try {
      const kc = new KubeConfig();
      kc.loadFromString(sim.kubeconfig());
      const slept: number[] = [];
      const cluster = new Cluster(kc, {
        rateLimit: { qps: 2, burst: 2 },
        deps: { now: () => 0, sleep: async (ms) => (slept.push(ms), true) },
      });
      for (let i = 0; i < 4; i++) await cluster.getPod('default', 'demo-0');
      assert.deepEqual(slept, [500, 1000]);
      assert.equal(cluster.requests.total({ verb: 'get' }), 4);
      cluster.close();
    } finally {
      await sim.close();
    }
  });
});
