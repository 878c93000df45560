// runPlan as a library user calls it (src/index.ts): a plan, a connection, an io for warnings
// and a sink per cluster; against the simulated cluster, in this process. The session shows no
// progress of its own: every event reaches the caller's sink, and it writes only warnings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPlanText, runPlan, type RolloutEvent } from '../../../src/index.js';
import { startSim } from '../../../src/sim/index.js';

const PLAN = `
apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: lib }
spec:
  target: { namespace: default, selector: { matchLabels: { app: demo } } }
  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }
  strategy: { waves: [1, "100%"], concurrency: 2, maxUnavailable: 2, podTimeout: 2m }
`;

test('runPlan upgrades the pods, tells the caller every event through its sink, and writes no progress', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kwave-runplan-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const sim = await startSim({ pods: 3, timeScale: 0.05, kubeconfigOut: kubeconfig });
  try {
    const loaded = loadPlanText(PLAN, 'lib.yaml');
    assert.ok(loaded.ok);
    const events: RolloutEvent[] = [];
    let stderr = '';
    const clusters: (string | undefined)[] = [];
    let closed = 0;
    const code = await runPlan(loaded.plan, {
      connection: { kubeconfig },
      io: { stderr: { write: (s: string) => (stderr += s) }, env: {} },
      sinks: (cluster) => {
        clusters.push(cluster);
        return { sink: (e) => events.push(e), close: () => closed++ };
      },
      direction: 'upgrade',
      signals: [],
    });
    assert.equal(code, 0, stderr);
    assert.deepEqual(clusters, [undefined]);
    assert.equal(closed, 1);
    assert.equal(events[0]?.event, 'rollout-start');
    const end = events.at(-1);
    assert.ok(end?.event === 'rollout-end' && end.phase === 'Completed', JSON.stringify(end));
    assert.equal(events.filter((e) => e.event === 'pod-end').length, 3);
    assert.equal(stderr, '');
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
});
