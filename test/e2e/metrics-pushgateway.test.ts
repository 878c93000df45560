// `kwave run --pushgateway URL` (the built CLI) against the simulated cluster and a real
// Pushgateway (Debian's prometheus-pushgateway): the series are pushed under job kwave, plan=NAME,
// at the end of a wave (seen while an approval gate holds the run after it, so no timing decides
// whether the test sees it) and at exit (the final state). A gateway that does not answer is
// reported and the rollout goes on. Completion is read from the pods, not from the exit code.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MetricsPusher } from '../../src/metrics/push.js';
import { KwaveMetrics } from '../../src/metrics/registry.js';
import { freePort, startPushgateway } from './helpers/prometheus.js';
import { missing } from './helpers/prerequisites.js';
import { planYaml } from './helpers/plans.js';
import { jsonEvents, kwaveCli, startWorld, type CliResult, type World } from './helpers/metricsRun.js';
import { noClusterOnReal } from './helpers/backend.js';

const PLAN = 'pushed-plan';
/** One pod, then all; an approval gate after wave 1 holds the run while the test reads the gateway. */
const heldPlan = (name: string) =>
  planYaml({ name, waves: '[1, "100%"]', concurrency: 2, gates: [{ name: 'sign-off', approval: true }] });
const plainPlan = (name: string) => planYaml({ name, waves: '[1, "100%"]', concurrency: 2 });

/** Value of the pushed sample `metric` whose labels include all of `want`, from the gateway's /metrics. */
function pushed(text: string, metric: string, want: Record<string, string>): number[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${metric}{`) && Object.entries(want).every(([k, v]) => l.includes(`${k}="${v}"`)))
    .map((l) => Number(l.split(' ').pop()));
}

const skip = missing('prometheus-pushgateway');
describe('kwave run --pushgateway', () => {
  let gateway: Awaited<ReturnType<typeof startPushgateway>>;
  let world: World;
  let run: CliResult;
  /** The group as seen while the approval gate after wave 1 holds the run. */
  let duringPause: string | undefined;
  let target: string;
  let unreachableRun: CliResult;
  let deadGateway: string;
  const worlds: World[] = [];

  before(async () => {
    if (skip) return;
    gateway = await startPushgateway();
    world = await startWorld({ pods: 3 });
    const other = await startWorld({ pods: 2 });
    worlds.push(world, other);
    deadGateway = `http://127.0.0.1:${await freePort()}`;
    const plan = await world.writePlan(PLAN, heldPlan(PLAN));
    const otherPlan = await other.writePlan('not-pushed', plainPlan('not-pushed'));
    const image = world.sim.images.lookup('nginx:1.25.3')!;
    target = `${image.repository}@${image.digest}`;
    const running = kwaveCli([
      'run',
      plan,
      '-o',
      'json',
      '--kubeconfig',
      world.kubeconfig,
      '--metrics-address',
      'off',
      '--pushgateway',
      gateway.url,
    ]);
    let done = false;
    void running.finally(() => (done = true));
    // The run waits for approval after wave 1 until the test gives it: wave 1's push is read first.
    const deadline = Date.now() + 120_000;
    while (!done && duringPause === undefined && Date.now() < deadline) {
      const text = await (await fetch(`${gateway.url}/metrics`)).text();
      if (pushed(text, 'kwave_pod_upgrades_completed_total', { job: 'kwave', plan: PLAN, wave: '1' })[0] === 1)
        duringPause = text;
      else await new Promise((r) => setTimeout(r, 100));
    }
    const approved = await kwaveCli(['approve', plan, '--kubeconfig', world.kubeconfig]);
    assert.equal(approved.code, 0, approved.stderr);
    [run, unreachableRun] = await Promise.all([
      running,
      kwaveCli([
        'run',
        otherPlan,
        '-o',
        'json',
        '--kubeconfig',
        other.kubeconfig,
        '--metrics-address',
        '127.0.0.1:0',
        '--metrics-linger',
        '0s',
        '--pushgateway',
        deadGateway,
      ]),
    ]);
  });

  after(async () => {
    if (skip) return;
    await gateway?.stop();
    await Promise.all(worlds.map((w) => w.close()));
  });

  test('wave 1 pushed at its end: 1 upgrade, phase Progressing, wave 1 of 2', { skip }, () => {
    assert.ok(duringPause, 'the wave-end push was seen before the run ended');
    const labels = { job: 'kwave', plan: PLAN };
    assert.deepEqual(pushed(duringPause, 'kwave_rollout_phase', { ...labels, phase: 'Progressing' }), [1]);
    assert.deepEqual(pushed(duringPause, 'kwave_pod_upgrades_completed_total', { ...labels, wave: '2' }), [0]);
    assert.deepEqual(pushed(duringPause, 'kwave_rollout_waves', labels), [2]);
  });

  test('after the run the group holds the final state under job kwave, plan=NAME', { skip }, async () => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    assert.deepEqual([...(await world.imageIDs()).values()], [target, target, target], 'every pod runs the new image');
    const upgraded = jsonEvents(run.stdout).filter((e) => e.event === 'pod-end' && e.result === 'upgraded').length;
    assert.equal(upgraded, 3);
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    const labels = { job: 'kwave', plan: PLAN };
    const completed = pushed(text, 'kwave_pod_upgrades_completed_total', labels);
    assert.equal(
      completed.reduce((a, b) => a + b, 0),
      upgraded,
    );
    assert.deepEqual(pushed(text, 'kwave_rollout_phase', { ...labels, phase: 'Completed' }), [1]);
    assert.deepEqual(pushed(text, 'kwave_rollout_phase', { ...labels, phase: 'Progressing' }), [0]);
    assert.deepEqual(pushed(text, 'kwave_rollout_pods', { ...labels, state: 'upgraded' }), [3]);
    assert.ok(pushed(text, 'kwave_kube_requests_total', { ...labels, verb: 'patch', resource: 'pods' })[0]! >= 3);
    assert.equal(pushed(text, 'push_time_seconds', labels).length, 1);
    // Only that plan's group: the run that could not push left nothing.
    assert.deepEqual(pushed(text, 'kwave_rollout_phase', { plan: 'not-pushed' }), []);
  });

  test('a gateway that does not answer is reported on stderr; the rollout completes', { skip }, async () => {
    assert.equal(unreachableRun.code, 0, unreachableRun.stderr);
    assert.deepEqual([...(await worlds[1]!.imageIDs()).values()], [target, target], 'every pod runs the new image');
    assert.match(
      unreachableRun.stderr,
      new RegExp(`kwave: pushing metrics to ${deadGateway}/metrics/job/kwave/plan/not-pushed failed: .*ECONNREFUSED`),
    );
    assert.equal(jsonEvents(unreachableRun.stdout).find((e) => e.event === 'rollout-end')?.event, 'rollout-end');
  });

  test('--metrics-address 127.0.0.1:0 reports the port the OS picked', { skip }, () => {
    assert.match(unreachableRun.stderr, /^kwave: serving metrics on http:\/\/127\.0\.0\.1:[1-9]\d*\/metrics$/m);
  });
});

describe('pushes in a row', { skip: noClusterOnReal }, () => {
  test('go one at a time, so a slow wave-end push cannot land after the final one', async () => {
    // A receiver that answers the first push late. Were pushes sent at once, they would overlap
    // and could reach a gateway in any order; one at a time, the last one asked for lands last.
    const received: string[] = [];
    let inFlight = 0;
    let most = 0;
    const server = createServer((req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c));
      req.on('end', () => {
        received.push(/kwave_rollout_phase\{plan="p",phase="(\w+)"\} 1/.exec(body)?.[1] ?? '');
        setTimeout(
          () => {
            inFlight--;
            res.writeHead(200).end();
          },
          received.length === 1 ? 300 : 0,
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const metrics = new KwaveMetrics({ plan: 'p', processMetrics: false });
      const pusher = new MetricsPusher(metrics, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      metrics.setPhase('Progressing');
      const pushes = [pusher.push(), pusher.push()];
      metrics.setPhase('Completed');
      pushes.push(pusher.push());
      assert.deepEqual(
        (await Promise.all(pushes)).map((r) => r.ok),
        [true, true, true],
      );
      assert.equal(most, 1, 'never two pushes in flight');
      assert.equal(received.length, 3);
      assert.equal(received.at(-1), 'Completed');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
