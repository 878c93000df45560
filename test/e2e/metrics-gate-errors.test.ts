// Prometheus gates that get no usable answer, through real `kwave run`s (the built CLI) against
// simulated clusters: an unreachable Prometheus counts as measurement errors up to
// consecutiveErrorLimit, then the gate fails and the rollout halts and rolls back; an empty result
// follows `noData` (pass: the rollout goes on; inconclusive: it halts). The three runs go at once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startPrometheus, type PrometheusServer } from './helpers/prometheus.js';
import { missing } from './helpers/prerequisites.js';
import { planYaml } from './helpers/plans.js';
import { jsonEvents, kwaveCli, startWorld, type CliResult, type World } from './helpers/metricsRun.js';
import type { RolloutEvent } from '../../src/rollout/events.js';

interface Outcome {
  world: World;
  run: CliResult;
  events: RolloutEvent[];
  before: Map<string, string>;
}

const NO_SUCH_SERIES =
  'sum(rate(sim_http_requests_total{app="no-such-app",code=~"5.."}[5s])) / sum(rate(sim_http_requests_total{app="no-such-app"}[5s]))';

const skip = missing('prometheus');
describe('Prometheus gates without a usable answer, through kwave run', () => {
  let prom: PrometheusServer;
  let deadAddress: string;
  const worlds: World[] = [];
  let unreachable: Outcome;
  let noDataPass: Outcome;
  let noDataInconclusive: Outcome;

  /** Two pods, waves of one then both, a gate after wave 1 with `prometheus` as given. */
  async function rollout(name: string, prometheus: Record<string, unknown>): Promise<Outcome> {
    const world = await startWorld({ pods: 2 });
    worlds.push(world);
    const plan = await world.writePlan(
      name,
      planYaml({ name, waves: '[1, "100%"]', rollback: 'all', gates: [{ name: 'error-rate', prometheus }] }),
    );
    const before = await world.imageIDs();
    const run = await kwaveCli([
      'run',
      plan,
      '-o',
      'json',
      '--kubeconfig',
      world.kubeconfig,
      '--metrics-address',
      'off',
    ]);
    return { world, run, events: jsonEvents(run.stdout), before };
  }

  before(async () => {
    if (skip) return;
    // Nothing listens on this port: every query is refused.
    deadAddress = `http://127.0.0.1:${await freePort()}`;
    prom = await startPrometheus({ targets: [] });
    [unreachable, noDataPass, noDataInconclusive] = await Promise.all([
      rollout('unreachable', {
        address: deadAddress,
        query: 'vector(0)',
        successCondition: 'result < 0.01',
        interval: '1s',
        count: 4,
        consecutiveErrorLimit: 1,
        timeout: '2s',
      }),
      rollout('nodata-pass', {
        address: prom.url,
        query: NO_SUCH_SERIES,
        successCondition: 'result < 0.01',
        interval: '1s',
        count: 2,
        noData: 'pass',
      }),
      rollout('nodata-inconclusive', {
        address: prom.url,
        query: NO_SUCH_SERIES,
        successCondition: 'result < 0.01',
        interval: '1s',
        count: 2,
        noData: 'inconclusive',
      }),
    ]);
  });

  after(async () => {
    if (skip) return;
    await prom?.stop();
    await Promise.all(worlds.map((w) => w.close()));
  });

  const halt = (o: Outcome) => o.events.find((e): e is Extract<RolloutEvent, { event: 'halt' }> => e.event === 'halt');
  const end = (o: Outcome) =>
    o.events.find((e): e is Extract<RolloutEvent, { event: 'rollout-end' }> => e.event === 'rollout-end');
  const measurements = (o: Outcome) =>
    o.events.filter((e): e is Extract<RolloutEvent, { event: 'gate-measurement' }> => e.event === 'gate-measurement');

  test(
    'an unreachable Prometheus: errors up to consecutiveErrorLimit (1), the second in a row fails the gate; halt, exit 3, rolled back',
    { skip },
    async (t) => {
      assert.equal(unreachable.run.code, 3, unreachable.run.stderr + unreachable.run.stdout);
      assert.deepEqual(
        measurements(unreachable).map((m) => [m.index, m.phase, m.value]),
        [
          [1, 'error', null],
          [2, 'error', null],
        ],
      );
      const message = halt(unreachable)?.message ?? '';
      t.diagnostic(`halt: ${message}`);
      assert.equal(
        message.startsWith(
          `error-rate: 2 measurement errors in a row (consecutiveErrorLimit 1), the last at measurement 2 of 4: GET ${deadAddress}/api/v1/query: `,
        ),
        true,
        message,
      );
      assert.match(message, /ECONNREFUSED/);
      assert.equal(end(unreachable)?.phase, 'RolledBack');
      assert.deepEqual(await unreachable.world.imageIDs(), unreachable.before);
    },
  );

  test('an empty result with noData: pass passes the gate and the rollout completes', { skip }, async () => {
    assert.equal(noDataPass.run.code, 0, noDataPass.run.stderr + noDataPass.run.stdout);
    assert.deepEqual(
      measurements(noDataPass).map((m) => [m.phase, m.message]),
      [
        ['successful', 'query returned no data (noData: pass)'],
        ['successful', 'query returned no data (noData: pass)'],
      ],
    );
    assert.equal(end(noDataPass)?.phase, 'Completed');
    const target = noDataPass.world.sim.images.lookup('nginx:1.25.3')!;
    assert.ok(
      [...(await noDataPass.world.imageIDs()).values()].every((id) => id === `${target.repository}@${target.digest}`),
    );
  });

  test(
    'an empty result with noData: inconclusive makes the gate inconclusive: halt, exit 3, rolled back',
    { skip },
    async () => {
      assert.equal(noDataInconclusive.run.code, 3, noDataInconclusive.run.stderr + noDataInconclusive.run.stdout);
      const gateEnd = noDataInconclusive.events.find((e) => e.event === 'gate-end');
      assert.equal(gateEnd?.event === 'gate-end' && gateEnd.result, 'inconclusive');
      assert.equal(
        halt(noDataInconclusive)?.message,
        'error-rate: query returned no data (noData: inconclusive) at measurement 1 of 2',
      );
      assert.equal(end(noDataInconclusive)?.phase, 'RolledBack');
      assert.deepEqual(await noDataInconclusive.world.imageIDs(), noDataInconclusive.before);
    },
  );
});
