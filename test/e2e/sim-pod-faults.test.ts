// The simulator's pod and node faults that the chaos suite makes from outside kwave, through the
// admin port on either backend: a container that crashes (exit 1, restarted at once by its
// kubelet), a Node object deleted (its pods marked Failed and deleted by the pod GC: the
// simulator's on embedded, kube-controller-manager's own on real), and on embedded the slow watch
// (every watch event late by the same delay, in order).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeHttp } from '../../src/sim/agent/kubeHttp.js';
import type { KubeObject } from '../../src/sim/store.js';
import { BACKEND, embeddedOnly, realNotBuilt, startTestSim, type TestSim } from './helpers/backend.js';

const realKubelet = process.env.KWAVE_TEST_BACKEND === 'kubelet' && 'real kubelets run no simulated container to crash';

const post = async (sim: TestSim, path: string) => fetch(`${sim.metricsUrl}${path}`, { method: 'POST' });

async function until<T>(what: string, ms: number, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Status {
  phase?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  containerStatuses?: {
    restartCount: number;
    ready: boolean;
    imageID: string;
    lastState?: { terminated?: { exitCode: number; reason: string } };
  }[];
}
const statusOf = (p: KubeObject | undefined) => (p?.status ?? {}) as Status;
const ready = (p: KubeObject | undefined) => statusOf(p).conditions?.find((c) => c.type === 'Ready')?.status === 'True';

describe('pod and node faults of the simulator', { skip: realNotBuilt }, () => {
  const sims: TestSim[] = [];
  after(async () => {
    for (const s of sims) await s.close();
  });

  test(
    'a crashed container exits with code 1, is restarted at once on the same image, and the pod is Ready again',
    { skip: realKubelet },
    async () => {
      const sim = await startTestSim({ pods: 3, timeScale: 0.1 });
      sims.push(sim);
      const before = statusOf(sim.getPod('default', 'demo-0')).containerStatuses![0]!;
      const seen: KubeObject[] = [];
      const stop = sim.watchPod('default', 'demo-0', (p) => seen.push(p));
      const res = await post(sim, '/sim/pods/default/demo-0/crash');
      assert.equal(res.status, 200, await res.text());
      const after = await until('demo-0 restarted and Ready', 20_000, () => {
        const p = sim.getPod('default', 'demo-0');
        const cs = statusOf(p).containerStatuses?.[0];
        return cs && cs.restartCount === before.restartCount + 1 && ready(p) ? cs : undefined;
      });
      stop();
      assert.equal(after.imageID, before.imageID, 'the same image runs again');
      assert.deepEqual(
        { exitCode: after.lastState?.terminated?.exitCode, reason: after.lastState?.terminated?.reason },
        { exitCode: 1, reason: 'Error' },
      );
      assert.ok(
        seen.some((p) => !ready(p)),
        'not Ready between the crash and the restart',
      );
      const missing = await post(sim, '/sim/pods/default/no-such-pod/crash');
      assert.equal(missing.status, 409);
    },
  );

  test("a deleted node's pods are marked Failed (DisruptionTarget, DeletionByPodGC) and deleted by the pod GC; the others stay", async () => {
    const sim = await startTestSim({ pods: 6, timeScale: 0.1 });
    sims.push(sim);
    const nodeOf = (p: KubeObject) => (p.spec as { nodeName?: string }).nodeName;
    const onNode = sim.listPods().filter((p) => nodeOf(p) === 'sim-node-2');
    const others = sim.listPods().filter((p) => nodeOf(p) !== 'sim-node-2');
    assert.ok(onNode.length > 0 && others.length > 0);
    const victim = onNode[0]!.metadata.name;
    const seen: KubeObject[] = [];
    const stop = sim.watchPod('default', victim, (p) => seen.push(p));
    const started = Date.now();
    const res = await post(sim, '/sim/nodes/sim-node-2/delete');
    assert.equal(res.status, 200, await res.text());
    // Kubernetes' pod GC waits 40 s (times the time scale here) and then up to its 20 s period on real.
    await until("the node's pods gone", BACKEND === 'real' ? 150_000 : 20_000, () =>
      sim.listPods().some((p) => nodeOf(p) === 'sim-node-2') ? undefined : true,
    );
    stop();
    console.log(`# ${BACKEND}: the pod GC removed the deleted node's pods after ${Date.now() - started} ms`);
    const failed = seen.find((p) => statusOf(p).phase === 'Failed');
    assert.ok(
      failed,
      `the pod GC marked ${victim} Failed first: ${JSON.stringify(seen.map((p) => statusOf(p).phase))}`,
    );
    const target = statusOf(failed).conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.deepEqual([target?.status, target?.reason], ['True', 'DeletionByPodGC']);
    assert.deepEqual(
      sim.listPods().map((p) => p.metadata.name),
      others.map((p) => p.metadata.name),
      'the pods of the other nodes stay',
    );
  });

  test(
    'a slow watch delivers every event the delay late and in order, and on time again once switched off',
    { skip: embeddedOnly('the slow watch is a fault of the embedded API server') },
    async () => {
      const sim = await startTestSim({ pods: 2, timeScale: 0.1 });
      sims.push(sim);
      const http = new KubeHttp({ url: sim.url, caPem: sim.caPem, token: sim.token, userAgent: 'kwave-e2e' });
      const list = await http.request<{ metadata: { resourceVersion: string } }>(
        'GET',
        '/api/v1/namespaces/default/pods',
      );
      const arrived: { n: string; at: number }[] = [];
      const handle = http.watch(
        `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${list.metadata.resourceVersion}`,
        (_type, object) => {
          const n = (object as KubeObject).metadata.labels?.n;
          if (n) arrived.push({ n, at: Date.now() });
        },
      );
      try {
        const sent = new Map<string, number>();
        const touch = async (n: string) => {
          sent.set(n, Date.now());
          await sim.labelPodUncounted('default', n.endsWith('b') ? 'demo-1' : 'demo-0', { n });
        };
        await new Promise((r) => setTimeout(r, 300)); // the stream is open
        sim.embedded!.faults.watchDelayMs = 1500;
        await touch('1a');
        await new Promise((r) => setTimeout(r, 200));
        await touch('2b');
        await until('both delayed events', 10_000, () => (arrived.length >= 2 ? true : undefined));
        sim.embedded!.faults.watchDelayMs = 0;
        await touch('3a');
        await until('the event on time', 10_000, () => (arrived.length >= 3 ? true : undefined));
        assert.deepEqual(
          arrived.map((a) => a.n),
          ['1a', '2b', '3a'],
          'in order',
        );
        for (const a of arrived.slice(0, 2))
          assert.ok(a.at - sent.get(a.n)! >= 1400, `${a.n} late by ${a.at - sent.get(a.n)!} ms`);
        assert.ok(arrived[2]!.at - sent.get('3a')! < 1000, `3a late by ${arrived[2]!.at - sent.get('3a')!} ms`);
      } finally {
        handle.abort();
        http.close();
      }
    },
  );
});
