// Pushing kwave's metrics to a real Pushgateway (Debian's prometheus-pushgateway).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MetricsPusher, pushGroupUrl } from '../../src/metrics/push.js';
import { KwaveMetrics } from '../../src/metrics/registry.js';
import { freePort, startPushgateway } from './helpers/prometheus.js';
import { missing } from './helpers/prerequisites.js';
import { noClusterOnReal } from './helpers/backend.js';

/** `name{labels} value` lines of an exposition whose labels include all of `want`. */
function linesWith(text: string, metric: string, want: Record<string, string>): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${metric}{`))
    .filter((l) => Object.entries(want).every(([k, v]) => l.includes(`${k}="${v}"`)));
}

const skip = missing('prometheus-pushgateway');
describe('Pushgateway', { skip: noClusterOnReal }, () => {
  let gateway: Awaited<ReturnType<typeof startPushgateway>>;

  before(async () => {
    if (skip) return;
    gateway = await startPushgateway();
  });
  after(async () => {
    if (skip) return;
    await gateway?.stop();
  });

  test('pushes under job kwave, grouped by plan, and pushAdd updates the values', { skip }, async () => {
    const metrics = new KwaveMetrics({ plan: 'batch-plan' });
    metrics.declareWaves(2);
    metrics.setPhase('Progressing');
    metrics.podUpgradeConfirmedByImageID(1, 2.5);
    const pusher = new MetricsPusher(metrics, gateway.url);
    assert.equal(pusher.url, `${gateway.url}/metrics/job/kwave/plan/batch-plan`);

    const first = await pusher.push();
    assert.deepEqual(first, { ok: true, url: pusher.url });
    let text = await (await fetch(`${gateway.url}/metrics`)).text();
    const labels = { job: 'kwave', plan: 'batch-plan' };
    assert.equal(
      linesWith(text, 'kwave_pod_upgrades_completed_total', { ...labels, wave: '1' })[0]
        ?.split(' ')
        .pop(),
      '1',
    );
    assert.equal(
      linesWith(text, 'kwave_rollout_phase', { ...labels, phase: 'Progressing' })[0]
        ?.split(' ')
        .pop(),
      '1',
    );

    // Wave 2 ends, then the run: pushed again, the group shows the final state.
    metrics.podUpgradeConfirmedByImageID(2, 3);
    metrics.podUpgradeConfirmedByImageID(2, 4);
    metrics.setPhase('Completed');
    assert.equal((await pusher.push()).ok, true);
    text = await (await fetch(`${gateway.url}/metrics`)).text();
    assert.equal(
      linesWith(text, 'kwave_pod_upgrades_completed_total', { ...labels, wave: '2' })[0]
        ?.split(' ')
        .pop(),
      '2',
    );
    assert.equal(
      linesWith(text, 'kwave_rollout_phase', { ...labels, phase: 'Completed' })[0]
        ?.split(' ')
        .pop(),
      '1',
    );
    assert.equal(
      linesWith(text, 'kwave_rollout_phase', { ...labels, phase: 'Progressing' })[0]
        ?.split(' ')
        .pop(),
      '0',
    );
    // The gateway records when each group was last pushed successfully.
    assert.equal(linesWith(text, 'push_time_seconds', labels).length, 1);
  });

  test('a push to an unreachable gateway is a value, not an exception', { skip }, async () => {
    const port = await freePort();
    const metrics = new KwaveMetrics({ plan: 'p', processMetrics: false });
    const result = await new MetricsPusher(metrics, `http://127.0.0.1:${port}`).push();
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.error, /ECONNREFUSED/);
    assert.equal(result.url, pushGroupUrl(`http://127.0.0.1:${port}/`, 'p'));
  });
});
