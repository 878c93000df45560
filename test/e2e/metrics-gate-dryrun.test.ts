// A dry-run Prometheus gate through a real `kwave run` (the built CLI) on either backend, measured
// by a real Prometheus: the simulator's `nginx:errors` (half its requests answered 500) would fail
// the error-rate gate, but the gate is a dry run, so the rollout completes with exit 0; the
// would-be failure is in the run's events, in `kwave status` (text and JSON, from the rollout
// record) and in kwave_gate_measurements_total{dry_run="true",result="failed"}, scraped by that
// Prometheus. A second plan at once shows consecutiveSuccessLimit ending a good gate early.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, sampleCount, startPrometheus, waitFor, type PrometheusServer } from './helpers/prometheus.js';
import { missing } from './helpers/prerequisites.js';
import { planYaml } from './helpers/plans.js';
import {
  errorRateQuery,
  instant,
  jsonEvents,
  kwaveCli,
  startWorld,
  type CliResult,
  type World,
} from './helpers/metricsRun.js';
import type { RolloutEvent } from '../../src/rollout/events.js';

const skip = missing('prometheus');

describe('a dry-run gate that would have failed, and consecutiveSuccessLimit', () => {
  let prom: PrometheusServer;
  const worlds: World[] = [];
  let dry: { world: World; plan: string; run: CliResult; events: RolloutEvent[] };
  let streak: { world: World; plan: string; run: CliResult; events: RolloutEvent[] };

  async function rollout(
    world: World,
    name: string,
    image: string,
    gate: Record<string, unknown>,
    metricsAddress: string,
  ) {
    const plan = await world.writePlan(
      name,
      planYaml({
        name,
        image,
        waves: '["50%", "100%"]',
        concurrency: 2,
        maxUnavailable: 2,
        rollback: 'all',
        gates: [
          {
            name: 'error-rate',
            prometheus: {
              address: prom.url,
              query: errorRateQuery(world.appTarget),
              successCondition: 'result < 0.01',
              failureCondition: 'result >= 0.05',
              initialDelay: '2s',
              interval: '1s',
              ...gate,
            },
          },
        ],
      }),
    );
    const run = await kwaveCli([
      'run',
      plan,
      '-o',
      'json',
      '--kubeconfig',
      world.kubeconfig,
      '--metrics-address',
      metricsAddress,
      '--metrics-linger',
      '15s',
    ]);
    return { world, plan, run, events: jsonEvents(run.stdout) };
  }

  before(async () => {
    if (skip) return;
    const [dryWorld, streakWorld] = await Promise.all([startWorld({ pods: 4 }), startWorld({ pods: 4 })]);
    worlds.push(dryWorld, streakWorld);
    const kwaveMetricsPort = await freePort();
    prom = await startPrometheus({
      targets: [dryWorld.appTarget, streakWorld.appTarget, `127.0.0.1:${kwaveMetricsPort}`],
    });
    for (const w of worlds) {
      await waitFor(`app traffic of ${w.appTarget}`, async () =>
        sampleCount(await prom.query(errorRateQuery(w.appTarget))) > 0 ? true : undefined,
      );
    }
    [dry, streak] = await Promise.all([
      // Inconclusive measurements (the window still holding pre-upgrade traffic) are tolerated, so
      // the would-be verdict is the failure once the errors dominate.
      rollout(
        dryWorld,
        'dry-run',
        'nginx:errors',
        { dryRun: true, count: 6, inconclusiveLimit: 5 },
        `127.0.0.1:${kwaveMetricsPort}`,
      ),
      rollout(streakWorld, 'streak', 'nginx:1.25.3', { count: 20, consecutiveSuccessLimit: 2 }, 'off'),
    ]);
  });

  after(async () => {
    if (skip) return;
    await prom?.stop();
    await Promise.all(worlds.map((w) => w.close()));
  });

  test(
    'the rollout completes with exit 0; the gate passed as a dry run and says it would have failed',
    { skip },
    async (t) => {
      assert.equal(dry.run.code, 0, dry.run.stderr + dry.run.stdout);
      const gateEnd = dry.events.find((e) => e.event === 'gate-end');
      assert.ok(gateEnd?.event === 'gate-end', dry.run.stdout);
      t.diagnostic(`gate-end: ${gateEnd.message}`);
      assert.equal(gateEnd.result, 'passed');
      assert.equal(gateEnd.wouldHave?.result, 'failed');
      assert.match(
        gateEnd.wouldHave?.message ?? '',
        /^error-rate: result [\d.]+ matched failureCondition result >= 0\.05 at measurement \d of 6$/,
      );
      assert.match(
        gateEnd.message,
        /^error-rate: passed \(dry run; would have failed: result [\d.]+ matched failureCondition/,
      );
      const measurements = dry.events.filter((e) => e.event === 'gate-measurement');
      assert.ok(
        measurements.length >= 1 && measurements.every((m) => m.event === 'gate-measurement' && m.dryRun === true),
      );
      assert.equal(measurements.at(-1)?.event === 'gate-measurement' && measurements.at(-1)?.phase, 'failed');
      const end = dry.events.find((e) => e.event === 'rollout-end');
      assert.ok(end?.event === 'rollout-end' && end.phase === 'Completed', JSON.stringify(end));
      assert.ok(
        dry.events.some((e) => e.event === 'wave-start' && e.wave === 2),
        'wave 2 ran',
      );
      const target = dry.world.sim.images.lookup('nginx:errors')!;
      assert.ok(
        [...(await dry.world.imageIDs()).values()].every((id) => id === `${target.repository}@${target.digest}`),
        'every pod runs nginx:errors',
      );
    },
  );

  test(
    'kwave status shows the would-be failure and every measurement (value, condition matched, time); the record holds it',
    { skip },
    async (t) => {
      const text = await kwaveCli(['status', dry.plan, '--kubeconfig', dry.world.kubeconfig]);
      assert.equal(text.code, 0, text.stderr);
      t.diagnostic(text.stdout);
      assert.match(
        text.stdout,
        /^ {2}after wave 1 {2}error-rate {2}passed \(dry run: would have failed\) {2}error-rate: passed \(dry run; would have failed: /m,
      );
      const n = dry.events.filter((e) => e.event === 'gate-measurement').length;
      assert.match(
        text.stdout,
        new RegExp(`^measurements of gate error-rate after wave 1 \\(dry run\\) \\(${n} of 6\\):$`, 'm'),
      );
      assert.match(
        text.stdout,
        new RegExp(
          `^ {2}${n} {2}\\d{4}-\\d\\d-\\d\\dT\\S+Z {2}value [\\d.]+ {2}failed +result [\\d.]+ matched failureCondition result >= 0\\.05$`,
          'm',
        ),
      );
      const json = await kwaveCli(['status', dry.plan, '--kubeconfig', dry.world.kubeconfig, '-o', 'json']);
      const record = JSON.parse(json.stdout.trim().split('\n').at(-1)!) as {
        phase: string;
        gates: { result: string; dryRun?: boolean; wouldHave?: { result: string }; measurements?: unknown[] }[];
      };
      assert.equal(record.phase, 'Completed');
      assert.equal(record.gates[0]?.result, 'passed');
      assert.equal(record.gates[0]?.dryRun, true);
      assert.equal(record.gates[0]?.wouldHave?.result, 'failed');
      assert.equal(record.gates[0]?.measurements?.length, n);
    },
  );

  test(
    'Prometheus saw the would-be failure in kwave_gate_measurements_total{dry_run="true"}, and the check counted as passed',
    { skip },
    async () => {
      const last = async (q: string) =>
        Object.fromEntries(
          (await instant(prom, `last_over_time(${q}[5m])`)).map((s) => [
            `${s.labels.result}/${s.labels.dry_run ?? ''}`,
            s.value,
          ]),
        );
      const ms = await last('kwave_gate_measurements_total{plan="dry-run",gate="error-rate"}');
      assert.ok((ms['failed/true'] ?? 0) >= 1, JSON.stringify(ms));
      assert.deepEqual(
        Object.keys(ms).sort(),
        ['error/true', 'failed/true', 'inconclusive/true', 'successful/true'],
        'every series carries dry_run="true"',
      );
      const total = Object.values(ms).reduce((a, b) => a + b, 0);
      assert.equal(total, dry.events.filter((e) => e.event === 'gate-measurement').length);
      assert.deepEqual(await last('kwave_gate_checks_total{plan="dry-run",gate="error-rate"}'), {
        'passed/': 1,
        'failed/': 0,
        'inconclusive/': 0,
      });
    },
  );

  test(
    'consecutiveSuccessLimit 2 passes the gate at the second success in a row, long before count 20',
    { skip },
    () => {
      assert.equal(streak.run.code, 0, streak.run.stderr + streak.run.stdout);
      const gateEnd = streak.events.find((e) => e.event === 'gate-end');
      assert.ok(gateEnd?.event === 'gate-end' && gateEnd.result === 'passed', JSON.stringify(gateEnd));
      const measurements = streak.events.filter((e) => e.event === 'gate-measurement');
      assert.ok(measurements.length >= 2 && measurements.length < 20, `${measurements.length} measurements`);
      assert.deepEqual(
        measurements.slice(-2).map((m) => m.event === 'gate-measurement' && m.phase),
        ['successful', 'successful'],
      );
      assert.match(
        gateEnd.message,
        /2 measurements successful in a row \(consecutiveSuccessLimit 2\) at measurement \d+ of 20/,
      );
    },
  );
});
