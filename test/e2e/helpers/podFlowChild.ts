// A separate process that carries one pod through its in-place flow and prints each step, so a
// test can SIGKILL it at any step and start another. Args: KUBECONFIG POD IMAGE [DRAIN_MS
// [MIN_READY_MS]]: a long drain or minReady keeps a first process in that wait until it is killed.
import { connect } from '../../../src/cluster/connect.js';
import { PodCache } from '../../../src/cluster/podCache.js';
import { runPodFlow } from '../../../src/inplace/executor.js';

const [kubeconfig, pod, image, drainArg, minReadyArg] = process.argv.slice(2);
if (!kubeconfig || !pod || !image)
  throw new Error('usage: podFlowChild KUBECONFIG POD IMAGE [DRAIN_MS [MIN_READY_MS]]');
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
    drainMs: Number(drainArg ?? 300),
    // Far above the slow image's pull: only a kill ends a flow early.
    podTimeoutMs: 30 * 60_000,
    minReadyMs: Number(minReadyArg ?? 300),
  },
  { writer: cluster, reader: cache, now: Date.now, onStep: (step) => process.stdout.write(`STEP ${step.kind}\n`) },
);
process.stdout.write(
  `OUTCOME ${JSON.stringify({ kind: outcome.kind, writes: outcome.writes, message: outcome.message })}\n`,
);
cache.close();
cluster.close();
