// A separate process that carries one pod through its in-place flow and prints each step, so a
// test can SIGKILL it at any step and start another. Args: KUBECONFIG POD IMAGE.
import { connect } from '../../../src/cluster/connect.js';
import { PodCache } from '../../../src/cluster/podCache.js';
import { runPodFlow } from '../../../src/inplace/executor.js';

const [kubeconfig, pod, image] = process.argv.slice(2);
if (!kubeconfig || !pod || !image) throw new Error('usage: podFlowChild KUBECONFIG POD IMAGE');
const cluster = connect({ kubeconfig });
const cache = new PodCache(cluster, { namespaces: ['default'] });
await cache.synced;
const outcome = await runPodFlow(
  { namespace: 'default', name: pod },
  {
    plan: 'kill',
    revision: 'r1',
    wave: 1,
    direction: 'upgrade',
    containers: [{ name: 'nginx', image }],
    gate: { conditionType: 'kwave.dev/in-place-ready', required: true },
    drainMs: 300,
    podTimeoutMs: 30_000,
    minReadyMs: 300,
  },
  { writer: cluster, reader: cache, now: Date.now, onStep: (step) => process.stdout.write(`STEP ${step.kind}\n`) },
);
process.stdout.write(`OUTCOME ${JSON.stringify({ kind: outcome.kind, writes: outcome.writes, message: outcome.message })}\n`);
cache.close();
cluster.close();
