// A real `kwave run` (the built CLI) against the simulated cluster while a real Prometheus scrapes
// kwave's --metrics-address and the simulator's app metrics. Then: the upgrades Prometheus stored
// are the pods upgraded, its last scrape saw phase Completed (the linger waited for it), and every
// query of every panel of grafana/kwave-dashboard.json returns data over the run.
// The plan has a Prometheus gate after wave 1, so the gate panel has a real check to show.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, sampleCount, startPrometheus, waitFor, type PrometheusServer } from './helpers/prometheus.js';
import { missing } from './helpers/prerequisites.js';
import { planYaml } from './helpers/plans.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  allPanels,
  errorRateQuery,
  instant,
  jsonEvents,
  kwaveCli,
  queryPanels,
  readDashboard,
  single,
  startWorld,
  type CliResult,
  type World,
} from './helpers/metricsRun.js';
import { ROOT } from './helpers/kwaveBin.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { parse, stringify } from 'yaml';

/**
 * The identifiers of a PromQL expression that can be metric names, whole: not functions (followed
 * by `(`), not inside strings, matchers or ranges. Label names of `by (…)` come along; they never
 * equal a kwave_ metric, and a prefix like kwave_rollout_wave no longer matches kwave_rollout_waves.
 */
const PROMQL_WORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'group',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'quantile',
  'count_values',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
]);
function metricNames(expr: string): Set<string> {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]');
  return new Set(
    [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?![a-zA-Z0-9_:]|\s*\()/g)]
      .map((m) => m[0])
      .filter((n) => !PROMQL_WORDS.has(n)),
  );
}

/** The metrics of docs/metrics.md's table: `| \`kwave_x\` | type | … |`. */
function documentedMetrics(): { name: string; type: string }[] {
  const text = readFileSync(join(ROOT, 'docs/metrics.md'), 'utf8');
  return [...text.matchAll(/^\| `(kwave_[a-z_]+)` \| (\w+) \|/gm)].map((m) => ({ name: m[1]!, type: m[2]! }));
}
import { noClusterOnReal } from './helpers/backend.js';

const PLAN = 'dash-run';
const PODS = 8;
const dashboard = readDashboard();

describe('dashboard structure', { skip: noClusterOnReal }, () => {
  test('is importable: schemaVersion, a DS_PROMETHEUS input, a plan variable', () => {
    assert.ok(
      dashboard.schemaVersion >= 36 && dashboard.schemaVersion <= 41,
      `schemaVersion ${dashboard.schemaVersion}`,
    );
    assert.deepEqual(
      dashboard.__inputs.map((i) => [i.name, i.pluginId]),
      [['DS_PROMETHEUS', 'prometheus']],
    );
    const plan = dashboard.templating.list.find((v) => v.name === 'plan');
    assert.ok(plan, 'a "plan" template variable');
    assert.equal(plan.definition, 'label_values(kwave_rollout_phase, plan)');
    // A multi-cluster plan's series carry `cluster`; All (.*) also matches a one-cluster plan's, which have none.
    const cluster = dashboard.templating.list.find((v) => v.name === 'cluster') as
      (typeof plan & { includeAll?: boolean; allValue?: string }) | undefined;
    assert.ok(cluster, 'a "cluster" template variable');
    assert.equal(cluster.definition, 'label_values(kwave_rollout_phase{plan="$plan"}, cluster)');
    assert.equal(cluster.includeAll, true);
    assert.equal(cluster.allValue, '.*');
    assert.equal(dashboard.id, null);
    assert.equal(typeof dashboard.uid, 'string');
  });

  test('every panel uses the input datasource, has a unique id, a place, and filters by plan', () => {
    const panels = allPanels(dashboard.panels);
    assert.ok(panels.length >= 10);
    assert.equal(new Set(panels.map((p) => p.id)).size, panels.length);
    for (const p of panels) {
      assert.equal(p.datasource?.uid, '${DS_PROMETHEUS}', p.title);
      assert.ok(p.gridPos, p.title);
      assert.ok((p.targets ?? []).length > 0, `${p.title} has queries`);
      for (const t of p.targets ?? [])
        assert.match(t.expr, /plan="\$plan",cluster=~"\$cluster"/, `${p.title} ${t.refId} filters by plan and cluster`);
    }
  });

  test('charts every metric of the table in docs/metrics.md, matched as whole metric names', () => {
    const charted = new Set(
      allPanels(dashboard.panels)
        .flatMap((p) => (p.targets ?? []).map((t) => t.expr))
        .flatMap((expr) => [...metricNames(expr)]),
    );
    const documented = documentedMetrics();
    assert.ok(documented.length >= 12, `docs/metrics.md lists the metrics: ${documented.join(', ')}`);
    for (const { name, type } of documented) {
      // A histogram is charted through its _bucket (quantiles), _sum or _count series.
      const series = type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
      assert.ok(
        series.some((n) => charted.has(n)),
        `a panel charts ${name}; charted: ${[...charted].sort().join(', ')}`,
      );
    }
  });
  test('a Notifications panel charts kwave_notifications_total by its one label, result (sent, failed, dropped)', () => {
    const panel = allPanels(dashboard.panels).find((p) => p.title === 'Notifications');
    assert.ok(panel, 'a panel titled Notifications');
    const exprs = (panel.targets ?? []).map((t) => t.expr);
    assert.ok(
      exprs.some((e) => metricNames(e).has('kwave_notifications_total')),
      exprs.join(' | '),
    );
    assert.ok(
      exprs.every((e) => /sum by \(result\) \(increase\(kwave_notifications_total\{/.test(e)),
      `split by result: ${exprs.join(' | ')}`,
    );
    // Failures stand out: the colours follow the result, not the palette's order.
    const colours = Object.fromEntries(
      (panel.fieldConfig?.overrides ?? []).map((o) => [o.matcher.options, o.properties[0]?.value.fixedColor]),
    );
    assert.deepEqual(colours, { sent: 'green', failed: 'red', dropped: 'orange' });
  });
  test('metricNames matches whole names: kwave_rollout_waves is not kwave_rollout_wave', () => {
    const names = metricNames(
      'max(kwave_rollout_waves{plan="$plan",x="kwave_rollout_wave"}) - sum by (le) (rate(x_bucket[5m]))',
    );
    assert.equal(names.has('kwave_rollout_waves'), true);
    assert.equal(names.has('kwave_rollout_wave'), false);
    assert.equal(names.has('x_bucket'), true);
    assert.equal(names.has('max') || names.has('rate') || names.has('sum'), false, 'functions are not metrics');
  });
});

const skip = missing('prometheus');
describe('after a real kwave run scraped by a real Prometheus', () => {
  let world: World;
  let prom: PrometheusServer;
  let run: CliResult;
  let startedAt: number;
  let endedAt: number;
  let before_: Map<string, string>;
  let receiver: Receiver;

  before(async () => {
    if (skip) return;
    world = await startWorld({ pods: PODS });
    before_ = await world.imageIDs();
    const kwavePort = await freePort();
    prom = await startPrometheus({ targets: [world.appTarget, `127.0.0.1:${kwavePort}`] });
    // The gate's rate() needs two scrapes of the app first.
    await waitFor('app traffic in Prometheus', async () =>
      sampleCount(await prom.query('sum(rate(sim_http_requests_total[5s]))')) > 0 ? true : undefined,
    );
    // A notification receiver, so the Notifications panel has sends to count.
    receiver = await startReceiver('ok');
    const withNotify = (yaml: string) => {
      const doc = parse(yaml) as { spec: Record<string, unknown> };
      doc.spec.notify = [{ url: `${receiver.url}/hook`, on: ['started', 'wave-completed', 'completed'] }];
      return stringify(doc);
    };
    const plan = await world.writePlan(
      PLAN,
      withNotify(
        planYaml({
          name: PLAN,
          waves: '[1, "50%", "100%"]',
          concurrency: 2,
          maxUnavailable: 2,
          gates: [
            {
              name: 'error-rate',
              afterWaves: [1],
              prometheus: {
                address: prom.url,
                query: errorRateQuery(world.appTarget),
                successCondition: 'result < 0.01',
                failureCondition: 'result >= 0.05',
                initialDelay: '1s',
                interval: '1s',
                count: 2,
              },
            },
          ],
        }),
      ),
    );
    startedAt = Date.now() / 1000;
    run = await kwaveCli([
      'run',
      plan,
      '-o',
      'json',
      '--kubeconfig',
      world.kubeconfig,
      '--metrics-address',
      `127.0.0.1:${kwavePort}`,
      '--metrics-linger',
      '20s',
    ]);
    endedAt = Date.now() / 1000;
  });

  after(async () => {
    if (skip) return;
    await prom?.stop();
    await receiver?.close();
    await world?.close();
  });

  test('the run completes and every pod reports the new image ID', { skip }, async () => {
    assert.equal(run.code, 0, run.stderr);
    const end = jsonEvents(run.stdout).find((e) => e.event === 'rollout-end');
    assert.equal(end?.event === 'rollout-end' && end.phase, 'Completed');
    const target = world.sim.images.lookup('nginx:1.25.3')!;
    for (const [pod, id] of await world.imageIDs()) {
      assert.notEqual(id, before_.get(pod), pod);
      assert.equal(id, `${target.repository}@${target.digest}`, pod);
    }
  });

  test(
    'the last scrape Prometheus took saw the final state: upgrades counted = pods upgraded, phase Completed',
    { skip },
    async () => {
      const upgraded = jsonEvents(run.stdout).filter((e) => e.event === 'pod-end' && e.result === 'upgraded').length;
      assert.equal(upgraded, PODS);
      // kwave has exited and its series are stale; last_over_time reads the last stored scrape.
      assert.equal(
        await single(prom, `sum(last_over_time(kwave_pod_upgrades_completed_total{plan="${PLAN}"}[5m]))`),
        PODS,
      );
      const perWave = await instant(prom, `last_over_time(kwave_pod_upgrades_completed_total{plan="${PLAN}"}[5m])`);
      assert.deepEqual(Object.fromEntries(perWave.map((s) => [s.labels.wave, s.value])), { 1: 1, 2: 3, 3: 4 });
      const phases = await instant(prom, `last_over_time(kwave_rollout_phase{plan="${PLAN}"}[5m])`);
      assert.deepEqual(Object.fromEntries(phases.map((s) => [s.labels.phase, s.value])), {
        Pending: 0,
        Progressing: 0,
        Paused: 0,
        Halted: 0,
        Completed: 1,
        Partial: 0,
        RolledBack: 0,
      });
      assert.equal(await single(prom, `last_over_time(kwave_rollout_pods{plan="${PLAN}",state="upgraded"}[5m])`), PODS);
      assert.equal(
        await single(
          prom,
          `last_over_time(kwave_gate_checks_total{plan="${PLAN}",gate="error-rate",result="passed"}[5m])`,
        ),
        1,
      );
    },
  );

  test('the plan variable query finds the plan', { skip }, async () => {
    const res = await fetch(`${prom.url}/api/v1/label/plan/values?match[]=kwave_rollout_phase`);
    const body = (await res.json()) as { data: string[] };
    assert.deepEqual(body.data, [PLAN]);
  });

  test(
    'every query of every panel returns data over the run (range queries, as Grafana makes them)',
    { skip },
    async () => {
      const { empty, last } = await queryPanels(prom, PLAN, startedAt - 5, endedAt + 1);
      assert.deepEqual(empty, []);
      // What the stat panels show at the end (their last value): Completed (5 in the value mappings), wave 3 of 3, all pods at the target.
      const lastOf = (key: string) => last.get(key)?.[0]?.value;
      assert.equal(lastOf('Phase A'), 5);
      assert.equal(
        allPanels(dashboard.panels).find((p) => p.title === 'Phase')?.fieldConfig?.defaults?.mappings?.[0]?.options['5']
          ?.text,
        'Completed',
      );
      assert.equal(lastOf('Wave A'), 3);
      assert.equal(lastOf('Wave B'), 3);
      assert.equal(lastOf('Pods at target A'), 1);
      // started, 3 × wave-completed, completed: 5 sent; the panel shows every result (0 where none).
      assert.equal(receiver.received.length, 5, JSON.stringify(receiver.bodies()));
      assert.deepEqual(
        last
          .get('Notifications A')
          ?.map((s) => s.labels.result)
          .sort(),
        ['dropped', 'failed', 'sent'],
      );
      assert.equal(
        await single(prom, `sum(last_over_time(kwave_notifications_total{plan="${PLAN}",result="sent"}[5m]))`),
        5,
      );
      assert.equal(
        await single(
          prom,
          `sum(last_over_time(kwave_notifications_total{plan="${PLAN}",result=~"failed|dropped"}[5m]))`,
        ),
        0,
      );
      assert.deepEqual(
        last
          .get('Gate results A')
          ?.map((s) => [s.labels.gate, s.labels.result, s.value])
          .sort(),
        [
          ['error-rate', 'failed', 0],
          ['error-rate', 'inconclusive', 0],
          ['error-rate', 'passed', 1],
        ],
      );
    },
  );
});
