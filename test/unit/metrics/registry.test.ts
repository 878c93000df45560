import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KwaveMetrics, POD_STATES, ROLLOUT_PHASES } from '../../../src/metrics/registry.js';

/** `name{labels} value` → value, for the exact label text given. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('KwaveMetrics', () => {
  test('every metric of docs/metrics.md is there with its type, and every kwave_ sample has the plan label', async () => {
    const m = new KwaveMetrics({ plan: 'web' });
    m.declareWaves(2);
    m.declareGates(['error-rate']);
    m.kubeRequest('patch', 'pods', 200);
    const text = await m.exposition();
    const types: Record<string, string> = {
      kwave_rollout_pods: 'gauge',
      kwave_pod_upgrades_completed_total: 'counter',
      kwave_pod_upgrades_failed_total: 'counter',
      kwave_pod_rollbacks_total: 'counter',
      kwave_rollout_wave: 'gauge',
      kwave_rollout_waves: 'gauge',
      kwave_rollout_phase: 'gauge',
      kwave_pod_upgrade_duration_seconds: 'histogram',
      kwave_unavailable_pods: 'gauge',
      kwave_max_unavailable: 'gauge',
      kwave_gate_checks_total: 'counter',
      kwave_kube_requests_total: 'counter',
      kwave_kube_request_duration_seconds: 'histogram',
    };
    for (const [name, type] of Object.entries(types)) {
      const declared = name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
      assert.ok(
        text.includes(`# TYPE ${name} ${type}`) || text.includes(`# TYPE ${declared} ${type}`),
        `${name} is a ${type}`,
      );
    }
    const samples = text.split('\n').filter((l) => l.startsWith('kwave_'));
    assert.ok(samples.length > 40);
    for (const s of samples) assert.match(s, /[{,]plan="web"[,}]/, s);
    // Default process metrics come along.
    assert.match(text, /^process_cpu_user_seconds_total /m);
    assert.match(text, /^nodejs_heap_size_used_bytes /m);
  });

  test('series dashboards read exist from the start at 0', async () => {
    const text = await new KwaveMetrics({ plan: 'p', processMetrics: false }).exposition();
    for (const state of POD_STATES) assert.equal(value(text, `kwave_rollout_pods{plan="p",state="${state}"}`), 0);
    assert.equal(value(text, 'kwave_rollout_phase{plan="p",phase="Pending"}'), 1);
    assert.equal(value(text, 'kwave_pod_rollbacks_total{plan="p",result="succeeded"}'), 0);
    assert.equal(value(text, 'kwave_pod_upgrade_duration_seconds_count{plan="p"}'), 0);
    assert.equal(value(text, 'kwave_unavailable_pods{plan="p"}'), 0);
    assert.doesNotMatch(text, /^process_/m);
  });

  test('setPhase: 1 for the current phase, 0 for every other', async () => {
    const m = new KwaveMetrics({ plan: 'p', processMetrics: false });
    m.setPhase('Progressing');
    m.setPhase('Halted');
    const text = await m.exposition();
    for (const phase of ROLLOUT_PHASES)
      assert.equal(value(text, `kwave_rollout_phase{plan="p",phase="${phase}"}`), phase === 'Halted' ? 1 : 0, phase);
    assert.equal(m.phaseNow, 'Halted');
  });

  test('events: confirmed upgrades, failures, rollbacks, gates, requests', async () => {
    const m = new KwaveMetrics({ plan: 'p', processMetrics: false });
    m.declareWaves(3);
    m.setWave(2);
    m.podUpgradeConfirmedByImageID(1, 1.2);
    m.podUpgradeConfirmedByImageID(2, 40);
    m.podUpgradeConfirmedByImageID(2, 3);
    m.podUpgradeFailed(2, 'ErrImagePull');
    m.podUpgradeFailed(2, 'SomethingNew');
    m.podRolledBack('failed');
    m.gateChecked('error-rate', 'inconclusive');
    m.kubeRequest('patch', 'pods/status', 200, 0.004);
    m.kubeRequest('patch', 'pods', 409, 0.02);
    m.kubeRequest('list', 'pods', 0, 30);
    m.kubeRequest('watch', 'pods', 200);
    m.setPodStates({ upgraded: 3, failed: 1, pending: 2 });
    m.setUnavailable(1, 2);
    const text = await m.exposition();
    assert.equal(value(text, 'kwave_rollout_wave{plan="p"}'), 2);
    assert.equal(value(text, 'kwave_rollout_waves{plan="p"}'), 3);
    assert.equal(value(text, 'kwave_pod_upgrades_completed_total{plan="p",wave="1"}'), 1);
    assert.equal(value(text, 'kwave_pod_upgrades_completed_total{plan="p",wave="2"}'), 2);
    assert.equal(value(text, 'kwave_pod_upgrades_completed_total{plan="p",wave="3"}'), 0);
    assert.equal(value(text, 'kwave_pod_upgrades_failed_total{plan="p",wave="2",reason="ErrImagePull"}'), 1);
    assert.equal(value(text, 'kwave_pod_upgrades_failed_total{plan="p",wave="2",reason="SomethingNew"}'), 1);
    assert.equal(value(text, 'kwave_pod_upgrades_failed_total{plan="p",wave="3",reason="Timeout"}'), 0);
    assert.equal(value(text, 'kwave_pod_rollbacks_total{plan="p",result="failed"}'), 1);
    assert.equal(value(text, 'kwave_gate_checks_total{plan="p",gate="error-rate",result="inconclusive"}'), 1);
    assert.equal(value(text, 'kwave_kube_requests_total{plan="p",verb="patch",resource="pods",code="409"}'), 1);
    assert.equal(value(text, 'kwave_kube_requests_total{plan="p",verb="list",resource="pods",code="0"}'), 1);
    // Latency by verb and resource (not code); a watch is counted, not timed.
    assert.equal(
      value(
        text,
        'kwave_kube_request_duration_seconds_bucket{le="0.005",plan="p",verb="patch",resource="pods/status"}',
      ),
      1,
    );
    assert.equal(
      value(text, 'kwave_kube_request_duration_seconds_bucket{le="0.01",plan="p",verb="patch",resource="pods"}'),
      0,
    );
    assert.equal(
      value(text, 'kwave_kube_request_duration_seconds_bucket{le="0.025",plan="p",verb="patch",resource="pods"}'),
      1,
    );
    assert.equal(value(text, 'kwave_kube_request_duration_seconds_sum{plan="p",verb="list",resource="pods"}'), 30);
    assert.equal(
      value(text, 'kwave_kube_request_duration_seconds_count{plan="p",verb="watch",resource="pods"}'),
      undefined,
    );
    assert.equal(value(text, 'kwave_kube_requests_total{plan="p",verb="watch",resource="pods",code="200"}'), 1);
    assert.equal(value(text, 'kwave_rollout_pods{plan="p",state="upgraded"}'), 3);
    assert.equal(value(text, 'kwave_rollout_pods{plan="p",state="in_progress"}'), 0);
    assert.equal(value(text, 'kwave_unavailable_pods{plan="p"}'), 1);
    assert.equal(value(text, 'kwave_max_unavailable{plan="p"}'), 2);
    assert.equal(value(text, 'kwave_pod_upgrade_duration_seconds_count{plan="p"}'), 3);
    assert.equal(value(text, 'kwave_pod_upgrade_duration_seconds_bucket{le="5",plan="p"}'), 2);
    assert.equal(value(text, 'kwave_pod_upgrade_duration_seconds_sum{plan="p"}'), 44.2);
  });

  test('two instances do not share series (each has its own registry)', async () => {
    const a = new KwaveMetrics({ plan: 'a', processMetrics: false });
    const b = new KwaveMetrics({ plan: 'b', processMetrics: false });
    a.podUpgradeConfirmedByImageID(1, 1);
    assert.doesNotMatch(await b.exposition(), /plan="a"/);
  });
});
