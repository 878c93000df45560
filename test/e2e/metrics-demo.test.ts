// `kwave demo --gate` as a user runs it (the built CLI): a simulated cluster of 60 pods, a real
// Prometheus it starts itself, and plans/demo-gate.yaml, whose image answers half its requests
// with a 5xx. The canary wave passes the error-rate gate; after the 10% wave the fleet's error rate
// reaches about 5%, the gate fails, the rollout halts (exit 3) and every upgraded pod is rolled back.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { missing } from './helpers/prerequisites.js';
import { containerStatus, conditionStatus } from '../../src/inplace/podView.js';
import { embeddedOnly } from './helpers/backend.js';
import { runDemoKept } from './helpers/demoRun.js';
import { OLD_ID } from './helpers/images.js';

const skip = missing('prometheus');
describe('kwave demo --gate', { skip: embeddedOnly('kwave demo always starts the embedded simulator') }, () => {
  test(
    'halts on the error-rate gate after wave 2, names value and condition, and rolls the pods back',
    { skip },
    async (t) => {
      const run = await runDemoKept(['--gate']);
      const out = run.output();
      assert.equal(run.code, 3, `exit ${run.code}\n${out}`);

      // The canary's gate passed, the second wave's failed.
      // The measured rates are what the traffic makes them, not merely on the right side of a
      // threshold: the 10 s window starts after the wave ends (initialDelay 12 s), every Ready pod
      // serves 10 requests/s, nginx:errors fails half of them, and all series come from one scrape
      // target (one timestamp per sample), so rate()'s extrapolation cancels out of the ratio.
      // Canary: 5 of 600 per second = 0.0083; after wave 2, 6 pods: 30 of 600 = 0.05. What is left
      // is the per-scrape flooring of each pod's counter (at most 1 request per series at each end of
      // the window, a few percent of the value); the bounds below allow twice that.
      const passed = /gate error-rate passed: .*result ([\d.]+) matched successCondition result < 0\.02/.exec(out);
      assert.ok(passed, out);
      assert.ok(Math.abs(Number(passed[1]) - 5 / 600) < 0.0015, `canary error rate ${passed[1]}, expected 5/600`);
      const halt =
        /HALTED in wave 2\/4: (error-rate: result ([\d.]+) matched failureCondition result >= 0\.04 at measurement [123] of 3)\n/.exec(
          out,
        );
      assert.ok(halt, out);
      t.diagnostic(`halt: ${halt[1]}`);
      assert.ok(Math.abs(Number(halt[2]) - 30 / 600) < 0.005, `wave-2 error rate ${halt[2]}, expected 30/600`);
      assert.doesNotMatch(out, /wave 3\/4 started/);

      // The summary says why it stopped and that the pods went back; the proof reads the cluster.
      const summary = /RolledBack in [\d.]+m?s: halted: (.*)\n/.exec(out);
      assert.ok(summary, out);
      assert.equal(summary[1], `${halt[1]}; rolled back every upgraded pod`);
      const rolledBack = out.match(/pod default\/demo-\d+ rolled back in/g) ?? [];
      assert.equal(rolledBack.length, 6);
      assert.match(out, /\b0\/60 pods run imageID \S+ \(nginx:errors\)/);
      assert.match(out, /\b60\/60 run \S+ \(nginx:1\.14\.2\), 6 rolled back in place/);
      assert.match(out, /\b60\/60 pods are the same pods as before/);

      // The cluster, read by the test: every pod on the old imageID; the 6 upgraded ones restarted
      // twice in place (upgrade, rollback), the 54 others never; every gate open.
      assert.equal(run.pods.length, 60, out);
      const restarts = new Map<number, number>();
      for (const p of run.pods) {
        const cs = containerStatus(p, 'nginx');
        assert.equal(cs?.imageID, OLD_ID, p.metadata!.name!);
        assert.equal(p.spec!.containers[0]!.image, 'nginx:1.14.2', p.metadata!.name!);
        assert.equal(conditionStatus(p, 'kwave.dev/in-place-ready'), 'True', p.metadata!.name!);
        restarts.set(cs?.restartCount ?? -1, (restarts.get(cs?.restartCount ?? -1) ?? 0) + 1);
      }
      assert.deepEqual(Object.fromEntries(restarts), { 0: 54, 2: 6 });
    },
  );
});
