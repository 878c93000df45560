// The in-place flow of one pod, end to end: kwave's executor and cluster module against the
// simulated API server and kubelet, over HTTPS (issue 4's "must show").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { runPodFlow, type FlowContext, type PodFlowDeps } from '../../src/inplace/executor.js';
import { conditionStatus, containerStatus, isPodReady } from '../../src/inplace/podView.js';
import { defaultFixture, type Fixture } from '../../src/sim/fixture.js';
import type { KubeObject } from '../../src/sim/store.js';
import { simCluster, type SimCluster } from './helpers/simCluster.js';
import { BACKEND, embeddedOnly } from './helpers/backend.js';
import { clusterReader } from './helpers/clusterRead.js';
import { nginxImageID } from './helpers/images.js';

const GATE = 'kwave.dev/in-place-ready';
const D_MIRROR_ASKED = `sha256:${'1'.repeat(64)}`;
const D_MIRROR_SERVED = `sha256:${'2'.repeat(64)}`;

function fixture(): Fixture {
  const f = defaultFixture(16);
  f.images['nginx:mirrored'] = { digest: D_MIRROR_ASKED, servesDigest: D_MIRROR_SERVED };
  f.workloads.push({
    namespace: 'default',
    name: 'duo',
    replicas: 2,
    labels: { app: 'duo' },
    containers: [
      { name: 'nginx', image: 'nginx:1.14.2' },
      { name: 'sidecar', image: 'nginx:1.14.2' },
    ],
    readinessGate: { conditionType: GATE, condition: 'True' },
  });
  return f;
}

function ctx(containers: FlowContext['containers'], over: Partial<FlowContext> = {}): FlowContext {
  return {
    plan: 'e2e',
    revision: 'r1',
    wave: 1,
    direction: 'upgrade',
    containers,
    gate: { conditionType: GATE, required: true },
    drainMs: 0,
    podTimeoutMs: 20_000,
    minReadyMs: 0,
    ...over,
  };
}

describe('in-place upgrade of a pod against the simulated cluster', () => {
  let h: SimCluster;
  let deps: PodFlowDeps;
  before(async () => {
    h = await simCluster({ fixture: fixture() });
    deps = { writer: h.cluster, reader: h.cache, now: Date.now };
  });
  after(async () => h.close());

  test('upgrades with 3 writes: gate closed before the patch, pod unready throughout, gate open after', async () => {
    const versions: KubeObject[] = [];
    const unsubscribe = h.sim.watchPod('default', 'demo-0', (pod) => versions.push(pod));
    await h.resetStats();
    const before = containerStatus(h.pod('demo-0'), 'nginx')!;
    const outcome = await runPodFlow(
      { namespace: 'default', name: 'demo-0' },
      ctx([{ name: 'nginx', image: 'nginx:1.25.3' }]),
      deps,
    );
    unsubscribe();

    assert.equal(outcome.kind, 'done', outcome.message);
    assert.equal(outcome.writes, 3);
    const pod = h.pod('demo-0');
    const cs = containerStatus(pod, 'nginx')!;
    assert.equal(before.imageID, nginxImageID('1.14.2'));
    assert.equal(cs.imageID, nginxImageID('1.25.3'));
    assert.equal(cs.restartCount, (before.restartCount ?? 0) + 1);
    assert.notEqual(cs.containerID, before.containerID);
    assert.equal(conditionStatus(pod, GATE), 'True');
    await h.readyPod('demo-0');
    if (BACKEND === 'real') {
      // kube-apiserver names a write's field manager after its User-Agent: kwave's, not `unknown`
      // (the simulator keeps no managedFields).
      const read = (await clusterReader(h.kubeconfig).pods('default')).find((p) => p.metadata?.name === 'demo-0');
      const managers = (read?.metadata?.managedFields ?? []).map(
        (m) => `${m.manager} ${m.operation}${m.subresource ? ` ${m.subresource}` : ''}`,
      );
      assert.ok(
        managers.includes('kwave Update') &&
          managers.includes('kwave Update status') &&
          !managers.some((m) => m.startsWith('unknown')),
        managers.join(', '),
      );
    }

    const stats = await h.stats();
    // With no drain the image patch may meet the kubelet's own Ready write (its message for the
    // closed gate) and answer 409 once: one patch accepted, at most one refused.
    const refusedPatches = stats.refused['patch pods'] ?? 0;
    assert.ok(refusedPatches <= 1, `${refusedPatches} image patches refused`);
    assert.equal(stats.requests['patch pods'], 1 + refusedPatches);
    assert.equal(stats.requests['patch pods/status'], 2);

    const v = versions as unknown as V1Pod[];
    const image = (p: V1Pod) => p.spec?.containers.find((c) => c.name === 'nginx')?.image;
    const closed = v.findIndex((p) => conditionStatus(p, GATE) === 'False');
    const patched = v.findIndex((p) => image(p) === 'nginx:1.25.3');
    const opened = v.findIndex((p, i) => i > patched && conditionStatus(p, GATE) === 'True');
    assert.ok(
      closed >= 0 && closed < patched && patched < opened,
      `order close ${closed} < patch ${patched} < open ${opened}`,
    );
    for (let i = patched; i <= opened; i++)
      assert.equal(isPodReady(v[i]!), false, `version ${i} between the patch and the reopened gate is not Ready`);
    // The write that closes the gate turns the pod not Ready: kwave does not wait for the kubelet.
    assert.equal(isPodReady(v[closed]!), false, 'not Ready from the gate-closing write on');
    for (let i = closed; i <= opened; i++)
      assert.equal(isPodReady(v[i]!), false, `version ${i} stays not Ready until the gate reopens`);
  });

  test('a drain longer than the kubelet’s 10 s status sync: not Ready from the close to the reopening', async () => {
    // A Ready False that the kubelet takes for its own is written back True by its next status
    // sync; kwave's message makes it resync at once instead (docs/sim.md). 11 s spans one sync.
    const versions: { at: number; pod: V1Pod }[] = [];
    const unsubscribe = h.sim.watchPod('default', 'demo-10', (pod) =>
      versions.push({ at: Date.now(), pod: pod as unknown as V1Pod }),
    );
    const outcome = await runPodFlow(
      { namespace: 'default', name: 'demo-10' },
      ctx([{ name: 'nginx', image: 'nginx:1.25.3' }], { drainMs: 11_000 }),
      deps,
    );
    unsubscribe();
    assert.equal(outcome.kind, 'done', outcome.message);
    const closed = versions.findIndex((v) => conditionStatus(v.pod, GATE) === 'False');
    const patched = versions.findIndex((v) => v.pod.spec?.containers[0]?.image === 'nginx:1.25.3');
    const opened = versions.findIndex((v, i) => i > patched && conditionStatus(v.pod, GATE) === 'True');
    assert.ok(closed >= 0 && closed < patched && patched < opened, `close ${closed}, patch ${patched}, open ${opened}`);
    assert.ok(versions[patched]!.at - versions[closed]!.at >= 11_000, 'drained 11 s before the patch');
    for (let i = closed; i < opened; i++)
      assert.equal(
        isPodReady(versions[i]!.pod),
        false,
        `version ${i} (${versions[i]!.at - versions[closed]!.at} ms) is not Ready`,
      );
  });

  test('a same-digest retag completes through the restart', async () => {
    const before = containerStatus(h.pod('demo-1'), 'nginx')!;
    const outcome = await runPodFlow(
      { namespace: 'default', name: 'demo-1' },
      ctx([{ name: 'nginx', image: 'nginx:1.14.2-retag' }]),
      deps,
    );
    assert.equal(outcome.kind, 'done', outcome.message);
    const cs = containerStatus(h.pod('demo-1'), 'nginx')!;
    assert.equal(cs.imageID, before.imageID, 'same digest');
    assert.equal(cs.restartCount, (before.restartCount ?? 0) + 1);
  });

  test('a digest-pinned target served with another digest fails with DigestMismatch, gate kept closed', async () => {
    const outcome = await runPodFlow(
      { namespace: 'default', name: 'demo-2' },
      ctx([{ name: 'nginx', image: `nginx:mirrored@${D_MIRROR_ASKED}` }]),
      deps,
    );
    assert.equal(outcome.kind, 'failed');
    assert.equal(outcome.kind === 'failed' && outcome.reason, 'DigestMismatch');
    assert.equal(conditionStatus(h.pod('demo-2'), GATE), 'False');
  });

  test('two containers: only the named one changes; both when both are named', async () => {
    const one = await runPodFlow(
      { namespace: 'default', name: 'duo-0' },
      ctx([{ name: 'sidecar', image: 'nginx:1.25.3' }]),
      deps,
    );
    assert.equal(one.kind, 'done', one.message);
    assert.equal(containerStatus(h.pod('duo-0'), 'nginx')!.restartCount, 0);
    assert.equal(containerStatus(h.pod('duo-0'), 'nginx')!.imageID, nginxImageID('1.14.2'));
    assert.equal(containerStatus(h.pod('duo-0'), 'sidecar')!.restartCount, 1);
    assert.equal(containerStatus(h.pod('duo-0'), 'sidecar')!.imageID, nginxImageID('1.25.3'));

    const both = await runPodFlow(
      { namespace: 'default', name: 'duo-1' },
      ctx([
        { name: 'nginx', image: 'nginx:1.25.3' },
        { name: 'sidecar', image: 'nginx:1.25.3' },
      ]),
      deps,
    );
    assert.equal(both.kind, 'done', both.message);
    for (const c of ['nginx', 'sidecar']) {
      assert.equal(containerStatus(h.pod('duo-1'), c)!.imageID, nginxImageID('1.25.3'));
      assert.equal(containerStatus(h.pod('duo-1'), c)!.restartCount, 1);
    }
  });

  test('pull failure, crash loop and never-ready fail with the kubelet reason, gate kept closed, and leave an Event', async () => {
    const cases = [
      { pod: 'demo-3', image: 'nginx:broken', reasons: ['ErrImagePull', 'ImagePullBackOff'] },
      // It exits 300 ms after it starts. Without a readiness probe the kubelet counts it Ready
      // while it runs (1.37's reports it at once), so only minReadySeconds tells it from a good one.
      { pod: 'demo-4', image: 'nginx:crash', reasons: ['CrashLoopBackOff'], minReadyMs: 3_000 },
      { pod: 'demo-5', image: 'nginx:slow', reasons: ['Timeout'], podTimeoutMs: 1500 },
    ];
    const outcomes = await Promise.all(
      cases.map((c) =>
        runPodFlow(
          { namespace: 'default', name: c.pod },
          ctx([{ name: 'nginx', image: c.image }], {
            ...(c.podTimeoutMs ? { podTimeoutMs: c.podTimeoutMs } : {}),
            ...(c.minReadyMs ? { minReadyMs: c.minReadyMs } : {}),
          }),
          deps,
        ),
      ),
    );
    for (const [i, c] of cases.entries()) {
      const o = outcomes[i]!;
      assert.equal(o.kind, 'failed', `${c.image}: ${o.message}`);
      assert.ok(
        o.kind === 'failed' && c.reasons.includes(o.reason),
        `${c.image}: reason ${o.kind === 'failed' ? o.reason : ''}`,
      );
      assert.ok(o.message.length > 0);
      assert.equal(conditionStatus(h.pod(c.pod), GATE), 'False', `${c.image}: a failed pod keeps its gate closed`);
      const events = (await h.sim.events('default')).filter(
        (e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === c.pod,
      );
      assert.ok(
        events.some((e) => (e as { reason?: string }).reason === 'InPlaceUpdateFailed'),
        `${c.image}: an InPlaceUpdateFailed event`,
      );
    }
  });

  test('a pod deleted mid-upgrade is vanished', async () => {
    const flow = runPodFlow(
      { namespace: 'default', name: 'demo-6' },
      ctx([{ name: 'nginx', image: 'nginx:slow' }], { podTimeoutMs: 60_000 }),
      deps,
    );
    const patched = await h.cache.waitFor('default', 'demo-6', (p) => p.spec?.containers[0]?.image === 'nginx:slow', {
      timeoutMs: 10_000,
    });
    assert.notEqual(typeof patched, 'string');
    const res = await fetch(`${h.sim.metricsUrl}/sim/pods/default/demo-6/delete`, { method: 'POST' });
    assert.equal(res.status < 300, true);
    const outcome = await flow;
    assert.equal(outcome.kind, 'vanished', outcome.message);
  });

  test('a concurrent writer (409) makes kwave read again and decide again: one image patch lands', async () => {
    await h.resetStats();
    const racing: PodFlowDeps = {
      ...deps,
      writer: {
        patchPodStatus: (ns, name, body) => h.cluster.patchPodStatus(ns, name, body),
        resizePod: (ns, name, body) => h.cluster.resizePod(ns, name, body),
        createEvent: (spec) => h.cluster.createEvent(spec),
        patchPod: async (ns, name, body) => {
          // Another client labels the pod just before kwave's image patch arrives.
          if (!h.pod(name, ns).metadata?.labels?.once)
            await h.sim.labelPodUncounted(ns, name, { once: 'yes', touched: String(Date.now()) });
          return h.cluster.patchPod(ns, name, body);
        },
      },
    };
    const outcome = await runPodFlow(
      { namespace: 'default', name: 'demo-7' },
      ctx([{ name: 'nginx', image: 'nginx:1.25.3' }]),
      racing,
    );
    assert.equal(outcome.kind, 'done', outcome.message);
    assert.equal(containerStatus(h.pod('demo-7'), 'nginx')!.restartCount, 1);
    const stats = await h.stats();
    assert.equal(stats.requests['patch pods'], 2, 'the first image patch met a 409, the second landed');
    assert.equal(h.pod('demo-7').metadata?.labels?.once, 'yes', "the other writer's change survives");
  });

  test(
    'API faults (10% errors, latency, watch cuts) change no outcome',
    { skip: embeddedOnly('API faults are injected by the embedded API server (no proxy in front of kube-apiserver)') },
    async () => {
      const faults = h.sim.embedded!.faults;
      Object.assign(faults, { errorRate: 0.1, latencyMs: 20, watchCutSeconds: 1 });
      try {
        const pods = ['demo-8', 'demo-9', 'demo-10', 'demo-11', 'demo-12'];
        const outcomes = await Promise.all(
          pods.map((name) =>
            runPodFlow({ namespace: 'default', name }, ctx([{ name: 'nginx', image: 'nginx:1.25.3' }]), deps),
          ),
        );
        for (const [i, name] of pods.entries()) {
          assert.equal(outcomes[i]!.kind, 'done', `${name}: ${outcomes[i]!.message}`);
          const cs = containerStatus(h.pod(name), 'nginx')!;
          assert.equal(cs.imageID, nginxImageID('1.25.3'));
          assert.equal(cs.restartCount, 1, `${name} restarted exactly once`);
          assert.equal(conditionStatus(h.pod(name), GATE), 'True');
        }
      } finally {
        Object.assign(faults, { errorRate: 0, latencyMs: 0, watchCutSeconds: 0 });
      }
    },
  );

  test('rollback restores the recorded imageID and reopens the gate', async () => {
    const up = await runPodFlow(
      { namespace: 'default', name: 'demo-13' },
      ctx([{ name: 'nginx', image: 'nginx:1.25.3' }]),
      deps,
    );
    assert.equal(up.kind, 'done');
    const back = await runPodFlow({ namespace: 'default', name: 'demo-13' }, ctx([], { direction: 'rollback' }), deps);
    assert.equal(back.kind, 'done', back.message);
    const pod = h.pod('demo-13');
    assert.equal(containerStatus(pod, 'nginx')!.imageID, nginxImageID('1.14.2'));
    assert.equal(containerStatus(pod, 'nginx')!.restartCount, 2);
    assert.equal(pod.spec?.containers[0]?.image, 'nginx:1.14.2');
    assert.equal(conditionStatus(pod, GATE), 'True');
    await h.readyPod('demo-13');
    // The failed pull of demo-3 rolls back too: its gate reopens on the old image.
    const fixed = await runPodFlow({ namespace: 'default', name: 'demo-3' }, ctx([], { direction: 'rollback' }), deps);
    assert.equal(fixed.kind, 'done', fixed.message);
    assert.equal(conditionStatus(h.pod('demo-3'), GATE), 'True');
  });
});
