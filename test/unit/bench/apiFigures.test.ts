// The benchmark's reading of kwave's request metrics: totals, rate, mean and bucket quantiles.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiFigures, bucketQuantile, parseExposition } from '../../../bench/fleet/apiFigures.js';
import { KwaveMetrics } from '../../../src/metrics/registry.js';

describe('bench apiFigures', () => {
  test('quantiles interpolate within a bucket, as histogram_quantile does', () => {
    const b: [number, number][] = [
      [0.01, 50],
      [0.1, 90],
      [1, 100],
      [Infinity, 100],
    ];
    assert.equal(bucketQuantile(0.5, b), 0.01);
    assert.ok(Math.abs(bucketQuantile(0.7, b) - 0.055) < 1e-9);
    assert.ok(Math.abs(bucketQuantile(0.99, b) - 0.91) < 1e-9);
    assert.ok(Number.isNaN(bucketQuantile(0.5, [[Infinity, 0]])));
    assert.equal(
      bucketQuantile(1, [
        [0.5, 1],
        [Infinity, 2],
      ]),
      0.5,
      'beyond the last finite edge: that edge',
    );
  });

  test("from kwave's own exposition: every request counted, latency by verb and resource", async () => {
    const m = new KwaveMetrics({ plan: 'p' });
    for (let i = 0; i < 10; i++) m.kubeRequest('patch', 'pods', 200, 0.002);
    for (let i = 0; i < 20; i++) m.kubeRequest('patch', 'pods/status', 200, i < 19 ? 0.004 : 0.8);
    m.kubeRequest('watch', 'pods', 200);
    const text = await m.exposition();
    assert.ok(
      parseExposition(text).some(
        (s) => s.name === 'kwave_kube_requests_total' && s.labels.resource === 'pods/status' && s.value === 20,
      ),
    );
    const api = apiFigures(text, 2);
    assert.equal(api.requests, 31);
    assert.equal(api.perSecond, 15.5);
    assert.deepEqual(Object.keys(api.byRequest), ['patch pods', 'patch pods/status']);
    assert.ok(Math.abs(api.byRequest['patch pods']!.meanMs - 2) < 1e-6);
    assert.ok(Math.abs(api.byRequest['patch pods/status']!.meanMs - (19 * 4 + 800) / 20) < 1e-6);
    assert.ok(api.byRequest['patch pods/status']!.p50Ms <= 5);
    assert.ok(api.byRequest['patch pods/status']!.p99Ms > 500, 'the slow one shows in p99');
  });
});
