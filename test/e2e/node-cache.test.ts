// The node cache against the simulated cluster, through the real API server and client-node: one
// list and one watch of nodes, and a node's fault seen as the node lifecycle controller writes it
// (Ready Unknown, the unreachable taints with effects NoSchedule and NoExecute), then its return
// and its deletion.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../../src/cluster/connect.js';
import type { Cluster } from '../../src/cluster/cluster.js';
import { NodeCache, type NodeEntry } from '../../src/cluster/nodeCache.js';
import { nodeHealth } from '../../src/rollout/nodeHealth.js';
import { startSim, type Sim } from '../../src/sim/index.js';

describe('NodeCache on the simulator', () => {
  let sim: Sim;
  let dir: string;
  let cluster: Cluster;
  let cache: NodeCache;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kwave-nodecache-'));
    sim = await startSim({ pods: 3, kubeconfigOut: join(dir, 'kubeconfig') });
    cluster = connect({ kubeconfig: join(dir, 'kubeconfig'), env: {} });
    cache = new NodeCache(cluster);
    await cache.synced;
  });
  after(async () => {
    cache?.close();
    cluster?.close();
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Resolves with the first entry of `name` that `match` accepts (now or on a later change). */
  const until = (name: string, match: (e: NodeEntry | undefined) => boolean) =>
    new Promise<NodeEntry | undefined>((resolve, reject) => {
      if (match(cache.get(name))) return resolve(cache.get(name));
      const timer = setTimeout(() => (off(), reject(new Error(`node ${name} never matched`))), 20_000);
      const off = cache.onChange((n, e) => {
        if (n === name && match(e)) {
          clearTimeout(timer);
          off();
          resolve(e);
        }
      });
    });

  test('lists the three nodes, healthy', () => {
    for (const n of ['sim-node-1', 'sim-node-2', 'sim-node-3']) assert.equal(nodeHealth(cache.get(n)).canAct, true, n);
    assert.equal(cluster.requests.total({ verb: 'list', resource: 'nodes' }), 1);
  });

  test('a node NotReady through the admin port: Ready Unknown and the unreachable taints, NoSchedule and NoExecute', async () => {
    const res = await fetch(`${sim.metricsUrl}/sim/nodes/sim-node-2/not-ready`, { method: 'POST' });
    assert.equal(res.status, 200);
    const entry = await until('sim-node-2', (e) => !nodeHealth(e).canAct);
    assert.ok(entry && 'node' in entry);
    const ready = entry.node.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'Unknown');
    assert.equal(ready?.reason, 'NodeStatusUnknown');
    const taints = (entry.node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
    assert.deepEqual(taints, ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
    const h = nodeHealth(entry);
    assert.ok(
      !h.canAct && h.state === 'NotReady' && h.sinceMs !== undefined && Date.now() - h.sinceMs < 60_000,
      JSON.stringify(h),
    );
    assert.equal(nodeHealth(cache.get('sim-node-1')).canAct, true);
  });

  test('back: healthy again, taints gone; deleted: gone, since the news came', async () => {
    await fetch(`${sim.metricsUrl}/sim/nodes/sim-node-2/ready`, { method: 'POST' });
    const back = await until('sim-node-2', (e) => nodeHealth(e).canAct);
    assert.ok(back && 'node' in back);
    assert.equal(back.node.spec?.taints, undefined);
    const before = Date.now();
    sim.store.remove('nodes', undefined, 'sim-node-3');
    const gone = await until('sim-node-3', (e) => e !== undefined && 'goneSinceMs' in e);
    const h = nodeHealth(gone);
    assert.ok(!h.canAct && h.state === 'Gone' && (h.sinceMs ?? 0) >= before);
    // All of it from the one list and the one watch.
    assert.equal(cluster.requests.total({ verb: 'list', resource: 'nodes' }), 1);
    assert.equal(cluster.requests.total({ verb: 'watch', resource: 'nodes' }), 1);
  });
});
