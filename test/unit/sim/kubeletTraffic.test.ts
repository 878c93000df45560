// Readiness as the rest of the simulator sees it: /sim/stats' not-Ready counts and the app
// traffic counters, both driven by the pods' Ready condition in the store.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppTraffic } from '../../../src/sim/appMetrics.js';
import { deletePod, mergeFaults } from '../../../src/sim/disruptions.js';
import { NO_FAULTS } from '../../../src/sim/faults.js';
import { defaultFixture } from '../../../src/sim/fixture.js';
import { ImageTable } from '../../../src/sim/images.js';
import { watchPodReadiness } from '../../../src/sim/readiness.js';
import { SimStats } from '../../../src/sim/stats.js';
import type { KubeObject } from '../../../src/sim/store.js';
import { condition, harness, patchImage, setCondition, waitForGone, waitForPod } from './kubeletHelpers.js';

const GATE = 'kwave.dev/in-place-ready';

function fakePod(name: string, image: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'web', labels: { app: 'web' } },
    status: { containerStatuses: [{ name: 'nginx', image }] },
  };
}

describe('app traffic', () => {
  test('counts requests only while Ready, with the image errorRate as the 500 share', () => {
    let now = 0;
    const traffic = new AppTraffic({
      images: new ImageTable(defaultFixture(1).images),
      requestsPerSecond: 10,
      now: () => now,
    });
    traffic.onReadiness(fakePod('a', 'docker.io/library/nginx:1.14.2'), true);
    traffic.onReadiness(fakePod('b', 'docker.io/library/nginx:errors'), true);
    now = 10_000;
    assert.deepEqual(traffic.requests('web', 'a'), { ok: 100, failed: 0 });
    assert.deepEqual(traffic.requests('web', 'b'), { ok: 50, failed: 50 });
    traffic.onReadiness(fakePod('a', 'docker.io/library/nginx:1.14.2'), false);
    now = 20_000;
    assert.deepEqual(traffic.requests('web', 'a'), { ok: 100, failed: 0 }, 'no traffic while not Ready');
    traffic.onReadiness(fakePod('a', 'docker.io/library/nginx:errors'), true);
    now = 22_000;
    assert.deepEqual(traffic.requests('web', 'a'), { ok: 110, failed: 10 });
    const text = traffic.exposition();
    assert.match(text, /^# TYPE sim_http_requests_total counter$/m);
    assert.match(text, /^sim_http_requests_total\{namespace="web",pod="a",app="web",code="200"\} 110$/m);
    assert.match(text, /^sim_http_requests_total\{namespace="web",pod="b",app="web",code="500"\} 110$/m);
    traffic.onReadiness(fakePod('b', ''), undefined);
    assert.doesNotMatch(traffic.exposition(), /pod="b"/, 'a deleted pod has no series');
  });
});

describe('readiness in /sim/stats', () => {
  test('not-Ready pods are counted per namespace, with the most seen at once', async () => {
    const h = harness(3);
    const stats = new SimStats();
    const stop = watchPodReadiness(h.store, (pod, ready) =>
      stats.setPodReady(pod.metadata.namespace!, pod.metadata.name, ready ?? true),
    );
    try {
      assert.deepEqual(stats.snapshot().notReady, { default: 0 });
      // The kubelet turns each pod's Ready on its own timer: wait for both, in whatever order they come.
      const both = (status: string) =>
        Promise.all(
          ['demo-0', 'demo-1'].map((name) =>
            waitForPod(h.store, 'default', name, (p) => condition(p, 'Ready')?.status === status),
          ),
        );
      setCondition(h.store, 'default', 'demo-0', GATE, 'False');
      setCondition(h.store, 'default', 'demo-1', GATE, 'False');
      await both('False');
      assert.deepEqual(stats.snapshot().notReady, { default: 2 });
      // Not Ready for a while: the kubelet (100 times faster) may flip both back within the same
      // millisecond, and /sim/stats rounds to one.
      await new Promise((resolve) => setTimeout(resolve, 5));
      setCondition(h.store, 'default', 'demo-0', GATE, 'True');
      setCondition(h.store, 'default', 'demo-1', GATE, 'True');
      await both('True');
      patchImage(h.store, 'default', 'demo-2', 'nginx', 'nginx:broken');
      await waitForPod(h.store, 'default', 'demo-2', (p) => condition(p, 'Ready')?.status === 'False');
      const { unreadySeconds, ...counts } = stats.snapshot();
      assert.deepEqual(counts, {
        requests: {},
        refused: {},
        maxNotReady: { default: 2 },
        notReady: { default: 1 },
        maxNotReadyTotal: 2,
      });
      // Three pods were not Ready for a while; /sim/stats measures real time.
      assert.ok(unreadySeconds.default!.max >= 0.005, `max ${unreadySeconds.default!.max}`);
      assert.ok(unreadySeconds.default!.p50 <= unreadySeconds.default!.max);
      deletePod(h.store, 'default', 'demo-2', 1);
      await waitForGone(h.store, 'default', 'demo-2');
      assert.deepEqual(stats.snapshot().notReady, { default: 0 }, 'a deleted pod no longer counts');
    } finally {
      stop();
      h.close();
    }
  });
});

describe('disruptions', () => {
  test('deleting an unbound pod, or with grace 0, removes it at once', () => {
    const h = harness(1);
    try {
      deletePod(h.store, 'default', 'demo-0', 0);
      assert.equal(h.store.get('pods', 'default', 'demo-0'), undefined);
      assert.throws(() => deletePod(h.store, 'default', 'demo-0', 0), /NotFound/);
    } finally {
      h.close();
    }
  });

  test('fault settings merge into the live object, and bad ones leave it unchanged', () => {
    const live = { ...NO_FAULTS, errorCodes: [...NO_FAULTS.errorCodes] };
    const same = mergeFaults(live, { errorRate: 0.25, errorCodes: [503, 429] });
    assert.equal(same, live);
    assert.equal(live.errorRate, 0.25);
    assert.deepEqual(live.errorCodes, [503, 429]);
    assert.throws(() => mergeFaults(live, { errorRate: 2 }), /from 0 to 1/);
    assert.throws(() => mergeFaults(live, { nope: 1 }), /unknown fault "nope"/);
    assert.throws(() => mergeFaults(live, { latencyMs: '5' }), /expected a number/);
    assert.equal(live.errorRate, 0.25);
  });
});
