// The Grafana dashboard against a real Prometheus: a KwaveMetrics registry, served by kwave's
// metrics server, goes through a small simulated rollout while Prometheus scrapes it; then every
// query of every panel must return data, and the counts must be the ones recorded.
// (The executor does not exist yet; when it does, this test can drive a real `kwave demo` run.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { KwaveMetrics } from '../../src/metrics/registry.js';
import { startMetricsServer, type MetricsServer } from '../../src/metrics/server.js';
import { sampleCount, skipUnless, startPrometheus, waitFor, type PrometheusServer } from './helpers/prometheus.js';

const skip = skipUnless('prometheus');
const PLAN = 'web-nginx-1-25';
const dashboard = JSON.parse(readFileSync(new URL('../../grafana/kwave-dashboard.json', import.meta.url), 'utf8'));

interface Target {
  expr: string;
  refId: string;
}
interface Panel {
  id: number;
  title: string;
  type: string;
  targets?: Target[];
  panels?: Panel[];
  datasource?: { uid: string };
  gridPos?: unknown;
}

/** Every panel, including those inside collapsed rows. */
function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

/** Grafana's variables, with values fit for a 1-second scrape interval. */
function substitute(expr: string, plan: string): string {
  return expr
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__interval', '15s')
    .replaceAll('$__range', '1h')
    .replaceAll('${plan}', plan)
    .replaceAll('$plan', plan);
}

describe('dashboard structure', () => {
  test('is importable: schemaVersion, a DS_PROMETHEUS input, a plan variable', () => {
    assert.ok(dashboard.schemaVersion >= 36 && dashboard.schemaVersion <= 41, `schemaVersion ${dashboard.schemaVersion}`);
    assert.deepEqual(
      dashboard.__inputs.map((i: { name: string; pluginId: string }) => [i.name, i.pluginId]),
      [['DS_PROMETHEUS', 'prometheus']],
    );
    const plan = dashboard.templating.list.find((v: { name: string }) => v.name === 'plan');
    assert.ok(plan, 'a "plan" template variable');
    assert.equal(plan.definition, 'label_values(kwave_rollout_phase, plan)');
    assert.equal(dashboard.id, null);
    assert.equal(typeof dashboard.uid, 'string');
  });

  test('every panel uses the input datasource, has a unique id and a place', () => {
    const panels = allPanels(dashboard.panels);
    assert.ok(panels.length >= 10);
    assert.equal(new Set(panels.map((p) => p.id)).size, panels.length);
    for (const p of panels) {
      assert.equal(p.datasource?.uid, '${DS_PROMETHEUS}', p.title);
      assert.ok(p.gridPos, p.title);
      assert.ok((p.targets ?? []).length > 0, `${p.title} has queries`);
      for (const t of p.targets ?? []) assert.match(t.expr, /plan="\$plan"/, `${p.title} ${t.refId} filters by plan`);
    }
  });

  test('charts what DESIGN.md asks for', () => {
    const exprs = allPanels(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
    for (const metric of [
      'kwave_rollout_phase',
      'kwave_rollout_wave',
      'kwave_rollout_waves',
      'kwave_rollout_pods',
      'kwave_pod_upgrades_completed_total',
      'kwave_pod_upgrades_failed_total',
      'kwave_pod_rollbacks_total',
      'kwave_unavailable_pods',
      'kwave_max_unavailable',
      'kwave_pod_upgrade_duration_seconds_bucket',
      'kwave_gate_checks_total',
      'kwave_kube_requests_total',
    ]) {
      assert.ok(exprs.includes(metric), `a panel charts ${metric}`);
    }
  });
});

describe('dashboard against a real Prometheus after a simulated rollout', { skip }, () => {
  const metrics = new KwaveMetrics({ plan: PLAN });
  let server: MetricsServer;
  let prom: PrometheusServer;
  let startedAt: number;
  let completedRecorded = 0;

  const scrapedOnceMore = async () => {
    const seen = server.scrapes;
    await waitFor('a scrape', async () => (server.scrapes > seen ? true : undefined), 15_000, 50);
  };

  /** Three waves over six pods (1, 3, 6): one crash in wave 2, rolled back; a gate after waves 1 and 2. */
  async function simulateRollout() {
    const waves = [[0], [1, 2], [3, 4, 5]];
    metrics.declareWaves(waves.length);
    metrics.declareGates(['error-rate']);
    metrics.setPodStates({ pending: 6 });
    metrics.setUnavailable(0, 2);
    metrics.setPhase('Progressing');
    metrics.kubeRequest('list', 'pods', 200);
    metrics.kubeRequest('watch', 'pods', 200);
    const state = { pending: 6, in_progress: 0, upgraded: 0, failed: 0 };
    for (const [i, pods] of waves.entries()) {
      const wave = i + 1;
      metrics.setWave(wave);
      state.pending -= pods.length;
      state.in_progress += pods.length;
      metrics.setPodStates(state);
      metrics.setUnavailable(pods.length, 2);
      await scrapedOnceMore();
      for (const pod of pods) {
        metrics.kubeRequest('patch', 'pods/status', 200);
        metrics.kubeRequest('patch', 'pods', pod === 4 ? 409 : 200);
        state.in_progress--;
        if (pod === 4) {
          metrics.podUpgradeFailed(wave, 'CrashLoopBackOff');
          metrics.podRolledBack('succeeded');
          state.failed++;
        } else {
          metrics.kubeRequest('patch', 'pods/status', 200);
          metrics.podUpgradeConfirmedByImageID(wave, 1.5 + pod * 0.7);
          completedRecorded++;
          state.upgraded++;
        }
      }
      metrics.setPodStates(state);
      metrics.setUnavailable(0, 2);
      if (wave < waves.length) metrics.gateChecked('error-rate', 'passed');
      await scrapedOnceMore();
    }
    metrics.setPhase('Completed');
  }

  before(async () => {
    server = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 });
    prom = await startPrometheus({ targets: [`127.0.0.1:${server.port}`] });
    startedAt = Date.now() / 1000;
    await waitFor('the first scrape', async () => (sampleCount(await prom.query(`kwave_rollout_phase{plan="${PLAN}"}`)) > 0 ? true : undefined));
    await simulateRollout();
    await waitFor('phase Completed in Prometheus', async () => {
      const r = await prom.query(`kwave_rollout_phase{plan="${PLAN}",phase="Completed"} == 1`);
      return sampleCount(r) === 1 ? true : undefined;
    });
  });

  after(async () => {
    await server?.close({ lingerMs: 0 });
    await prom?.stop();
  });

  test('kwave_pod_upgrades_completed_total as scraped equals the upgrades recorded', async () => {
    const r = await prom.query(`sum(kwave_pod_upgrades_completed_total{plan="${PLAN}"})`);
    const samples = r.result as { value: [number, string] }[];
    assert.equal(Number(samples[0]!.value[1]), completedRecorded);
    assert.equal(completedRecorded, 5);
  });

  test('kwave_rollout_phase: Completed is 1, every other phase 0', async () => {
    const r = await prom.query(`kwave_rollout_phase{plan="${PLAN}"}`);
    const byPhase = Object.fromEntries((r.result as { metric: { phase: string }; value: [number, string] }[]).map((s) => [s.metric.phase, Number(s.value[1])]));
    assert.deepEqual(byPhase, { Pending: 0, Progressing: 0, Paused: 0, Halted: 0, Completed: 1, Partial: 0, RolledBack: 0 });
  });

  test('the plan variable query finds the plan', async () => {
    const res = await fetch(`${prom.url}/api/v1/label/plan/values?match[]=kwave_rollout_phase`);
    const body = (await res.json()) as { data: string[] };
    assert.ok(body.data.includes(PLAN), JSON.stringify(body.data));
  });

  test('every panel query returns data (instant query, now)', async () => {
    const empty: string[] = [];
    for (const panel of allPanels(dashboard.panels)) {
      for (const t of panel.targets ?? []) {
        const r = await prom.query(substitute(t.expr, PLAN));
        if (sampleCount(r) === 0) empty.push(`${panel.title} ${t.refId}: ${t.expr}`);
      }
    }
    assert.deepEqual(empty, []);
  });

  test('the Phase panel query reads 5 (Completed in its value mappings)', async () => {
    const phase = allPanels(dashboard.panels).find((p) => p.title === 'Phase')!;
    const r = await prom.query(substitute(phase.targets![0]!.expr, PLAN));
    assert.equal(Number((r.result as { value: [number, string] }[])[0]!.value[1]), 5);
    const mappings = (phase as unknown as { fieldConfig: { defaults: { mappings: { options: Record<string, { text: string }> }[] } } }).fieldConfig.defaults.mappings;
    assert.equal(mappings[0]!.options['5']!.text, 'Completed');
  });

  test('after kwave exits (final scrape taken, server closed), every panel still has data over the run, as Grafana asks', async () => {
    const closed = await server.close({ lingerMs: 15_000 });
    assert.equal(closed.finalScrape, true, 'the final state was scraped before the server closed');
    // Let Prometheus find the target gone (it then marks the series stale).
    await new Promise((r) => setTimeout(r, 1_500));
    const end = Date.now() / 1000;
    const empty: string[] = [];
    for (const panel of allPanels(dashboard.panels)) {
      for (const t of panel.targets ?? []) {
        const url = `${prom.url}/api/v1/query_range?query=${encodeURIComponent(substitute(t.expr, PLAN))}&start=${startedAt}&end=${end}&step=1`;
        const body = (await (await fetch(url)).json()) as { status: string; data: { result: { values: unknown[] }[] } };
        assert.equal(body.status, 'success', t.expr);
        if (!body.data.result.some((s) => s.values.length > 0)) empty.push(`${panel.title} ${t.refId}`);
      }
    }
    assert.deepEqual(empty, []);
  });
});
