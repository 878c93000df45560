// A run that halted and rolled back, killed before it could end (the record says Halted, no
// exit code), is started again on the same plan: the restart carries the halt on and patches no
// pod — the chaos suite's double patch (seed 325791685: a runner SIGKILLed right after its
// rollback patches; the restart upgraded and rolled back demo-0/1/2 a second time). The kill is
// made exact by writing the record as that kill leaves it. Checked on the cluster: /sim/stats'
// patch count, restartCount, images, gates. A halt that ended stands too: a plain re-run keeps it
// (chaos seeds 3037857111, 307090001: a second runner that started late upgraded the failed pods
// again), `kwave run --retry` retries it. And a runner killed after it recorded its end but
// before it released the lease (seed 868964929) is restarted as that halt, even with --retry: the
// restart takes the lease over from that very holder.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoordinationV1Api, CoreV1Api, KubeConfig, V1MicroTime } from '@kubernetes/client-node';
import { planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';

const OLD = 'nginx:1.14.2';

/** Rewrites the record ConfigMap as a runner killed after its rollback, before `rollout-end`, leaves it. */
async function asKilledBeforeTheEnd(fleet: Fleet, plan: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(fleet.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const cm = await core.readNamespacedConfigMap({ name: `kwave-${plan}`, namespace: 'default' });
  const status = JSON.parse(cm.data!['status.json']!) as Record<string, unknown>;
  assert.equal(status.phase, 'Halted', 'the first run halted');
  delete status.exitCode;
  delete status.endedAt;
  await core.replaceNamespacedConfigMap({
    name: cm.metadata!.name!,
    namespace: 'default',
    body: { ...cm, data: { ...cm.data, 'status.json': JSON.stringify(status) } },
  });
}

/** Gives the lease back to the record's holder, as a runner killed after `rollout-end`, before its release, leaves it. */
async function asKilledBeforeTheRelease(fleet: Fleet, plan: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(fleet.kubeconfig);
  const cm = await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: `kwave-${plan}`, namespace: 'default' });
  const status = JSON.parse(cm.data!['status.json']!) as { holder: string; exitCode?: number };
  assert.equal(status.exitCode, 3, 'the first run recorded its end');
  const leases = kc.makeApiClient(CoordinationV1Api);
  const lease = await leases.readNamespacedLease({ name: `kwave-${plan}`, namespace: 'default' });
  assert.equal(lease.spec?.holderIdentity, undefined, 'the first run released the lease');
  const now = new V1MicroTime(new Date());
  await leases.replaceNamespacedLease({
    name: lease.metadata!.name!,
    namespace: 'default',
    body: { ...lease, spec: { ...lease.spec, holderIdentity: status.holder, acquireTime: now, renewTime: now } },
  });
}

describe('kwave run after a halting run was killed', () => {
  test('carries the halt on: no pod patched again, exit 3; after the halt ended a re-run keeps it, --retry retries; killed before its release, carried on', async () => {
    const fleet = await startFleet({ pods: 6 });
    try {
      const file = await fleet.writePlan(
        'halt.yaml',
        planYaml({
          name: 'halt',
          image: 'nginx:broken',
          waves: '[2, "100%"]',
          concurrency: 2,
          maxUnavailable: 2,
          rollback: 'failed',
        }),
      );
      const first = await fleet.kwave(['run', file, '--metrics-address', 'off']);
      assert.equal(first.code, 3, first.stderr);
      const afterFirst = await fleet.pods();
      const rolledBack = [...afterFirst.values()]
        .filter((p) => p.annotation?.includes('"direction":"rollback"'))
        .map((p) => p.name);
      assert.equal(rolledBack.length, 2, 'wave 1 (two pods) failed and was rolled back');

      await asKilledBeforeTheEnd(fleet, 'halt');
      await fleet.resetStats();
      const restart = await fleet.kwave(['run', file, '--metrics-address', 'off']);
      const stats = await fleet.stats();
      assert.equal(stats.requests['patch pods'] ?? 0, 0, `no image patch: ${JSON.stringify(stats.requests)}`);
      assert.equal(restart.code, 3, restart.stderr);
      assert.match(restart.stderr, /carrying that halt on/);
      for (const p of (await fleet.pods()).values()) {
        const was = afterFirst.get(p.name)!;
        assert.equal(p.restartCount, was.restartCount, `${p.name}: no container restart`);
        assert.equal(p.specImage, OLD, `${p.name} on its old image`);
        assert.equal(p.gate, 'True', `${p.name} gate open`);
      }
      const record = await fleet.status(file);
      assert.equal(record.phase, 'Halted');

      // Now the halt has ended (the restart wrote its end). It stands: a plain re-run (a second
      // runner started late, tonight's CronJob) upgrades nothing; `--retry` retries wave 1.
      await fleet.resetStats();
      const again = await fleet.kwave(['run', file, '--metrics-address', 'off']);
      assert.equal(
        (await fleet.stats()).requests['patch pods'] ?? 0,
        0,
        'a re-run of a halted revision patches no pod',
      );
      assert.equal(again.code, 3, again.stderr);
      assert.match(again.stderr, /stays halted: no pod is upgraded; run it with --retry/);
      const dry = await fleet.kwave(['plan', file]);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(
        dry.stdout,
        /this revision halted \(.*\): kwave run carries the halt on and upgrades nothing; `kwave run --retry` would upgrade its failed pods again/,
      );
      await fleet.resetStats();
      const retry = await fleet.kwave(['run', file, '--retry', '--metrics-address', 'off']);
      assert.equal(retry.code, 3, retry.stderr);
      assert.equal(
        (await fleet.stats()).requests['patch pods'],
        4,
        'wave 1 upgraded and rolled back again, on purpose',
      );

      // That retry, killed after it recorded its end and before it let go of the lease: its
      // restart (a Job's, with the same --retry) carries the halt on.
      await asKilledBeforeTheRelease(fleet, 'halt');
      await fleet.resetStats();
      const afterEnd = await fleet.kwave(['run', file, '--retry', '--metrics-address', 'off']);
      assert.equal(
        (await fleet.stats()).requests['patch pods'] ?? 0,
        0,
        'the restart of a run that had ended patches no pod',
      );
      assert.equal(afterEnd.code, 3, afterEnd.stderr);
      assert.match(afterEnd.stderr, /died before it let go of the plan .*carrying that halt on/);
    } finally {
      await fleet.close();
    }
  });
});
