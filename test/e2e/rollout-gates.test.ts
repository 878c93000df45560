// Between and beyond waves, with the real `kwave` binary: an approval gate that holds the run
// until `kwave approve`; a partial rollout (`waves: [1, "10%"]`) continued by a wider plan; and
// `kwave rollback` putting the old image IDs back.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

describe('kwave run: gates and continuations', () => {
  test('an approval gate holds the run until `kwave approve`', async () => {
    const fleet = await startFleet({ pods: 10, timeScale: 0.3 });
    try {
      const plan = await fleet.writePlan(
        'gated.yaml',
        planYaml({
          name: 'gated',
          waves: '[1, "100%"]',
          concurrency: 3,
          maxUnavailable: 3,
          gates: '    - { name: sign-off, afterWaves: [1], approval: true }\n',
        }),
      );
      const run = fleet.start(['run', plan]);
      await run.waitFor((e) => e.event === 'gate-approval-wait', 'the approval wait');
      // The run waits: the record says so, and wave 2 has not begun.
      const waiting = (await fleet.status(plan)) as {
        phase: string;
        waiting?: { kind: string; wave: number; gate?: string };
        wave: number;
      };
      assert.equal(waiting.waiting?.kind, 'approval', JSON.stringify(waiting));
      assert.equal(waiting.waiting?.wave, 1);
      assert.equal(run.child.exitCode, null, 'kwave run is still running');
      assert.ok(!run.events.some((e) => e.event === 'wave-start' && e.wave === 2), 'wave 2 has not started');
      assert.equal([...(await fleet.pods()).values()].filter((p) => p.restartCount > 0).length, 1);

      const approve = await fleet.kwave(['approve', plan]);
      assert.equal(approve.code, 0, approve.stderr);
      assert.match(approve.stdout, /approved wave 1 of plan gated/);
      const exit = await exitOf(run);
      assert.equal(exit.code, 0, `exit ${exit.code}\n${run.stderr()}`);
      const gateEnd = run.events.find((e) => e.event === 'gate-end');
      assert.ok(gateEnd && gateEnd.event === 'gate-end' && gateEnd.result === 'passed', JSON.stringify(gateEnd));
      assert.equal(endOf(run).phase, 'Completed');
      for (const [name, p] of await fleet.pods()) assert.equal(p.imageID, NEW_ID, name);
      const record = (await fleet.status(plan)) as { phase: string; approvals: Record<string, { by: string }> };
      assert.equal(record.phase, 'Completed');
      assert.ok(record.approvals['1']?.by, JSON.stringify(record.approvals));
    } finally {
      await fleet.close();
    }
  });

  test('a partial rollout, a wider plan finishing it, then `kwave rollback` restoring the old image IDs', async () => {
    const fleet = await startFleet({ pods: 20, timeScale: 0.3 });
    try {
      const before = await fleet.pods();
      for (const p of before.values()) assert.equal(p.imageID, OLD_ID);
      await fleet.resetStats();

      // The same rollout (plan name, record, lease), first with two waves only: targets 1 and 2 of 20.
      const partial = await fleet.writePlan(
        'partial.yaml',
        planYaml({ name: 'web', waves: '[1, "10%"]', concurrency: 5, maxUnavailable: 5 }),
      );
      const first = fleet.start(['run', partial]);
      const exit1 = await exitOf(first);
      assert.equal(exit1.code, 0, first.stderr());
      const end1 = endOf(first);
      assert.equal(end1.phase, 'Partial');
      assert.match(end1.message, /2 upgraded, 18 left for a later plan/);
      assert.equal((await fleet.status(partial)).phase, 'Partial');
      const upgradedFirst = [...(await fleet.pods()).values()].filter((p) => p.imageID === NEW_ID).map((p) => p.name);
      assert.equal(upgradedFirst.length, 2);

      // More waves: another spec, so another revision; the 2 done pods meet targets 1 and 2.
      const wider = await fleet.writePlan(
        'wider.yaml',
        planYaml({ name: 'web', waves: '[1, "10%", "50%", "100%"]', concurrency: 5, maxUnavailable: 5 }),
      );
      const second = fleet.start(['run', wider]);
      const exit2 = await exitOf(second);
      assert.equal(exit2.code, 0, second.stderr());
      const start1 = first.events.find((e) => e.event === 'rollout-start');
      const start2 = second.events.find((e) => e.event === 'rollout-start');
      assert.ok(start1?.event === 'rollout-start' && start2?.event === 'rollout-start');
      assert.notEqual(start2.revision, start1.revision);
      assert.equal(start2.alreadyDone, 2);
      const waves = second.events.flatMap((e) => (e.event === 'wave-start' ? [[e.wave, e.pods]] : []));
      assert.deepEqual(waves, [
        [3, 8],
        [4, 10],
      ]);
      assert.equal(endOf(second).phase, 'Completed');
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.imageID, NEW_ID, name);
        assert.equal(p.restartCount, before.get(name)!.restartCount + 1, `${name}: upgraded exactly once`);
      }
      assert.equal((await fleet.stats()).requests['patch pods'], 20);

      // Rollback reverts what this plan's revision upgraded (docs/cli.md: `kwave rollback PLAN`): the 18
      // of the wider plan; the 2 of the partial plan's revision are reverted by rolling that back.
      await fleet.resetStats();
      const back = fleet.start(['rollback', wider]);
      const exit3 = await exitOf(back);
      assert.equal(exit3.code, 0, back.stderr());
      const end3 = endOf(back);
      assert.equal(end3.phase, 'RolledBack');
      assert.match(end3.message, /rolled back 18 pods/);
      // Last wave first.
      const order = back.events.flatMap((e) => (e.event === 'pod-start' ? [e.wave] : []));
      assert.deepEqual(
        order,
        [...order].sort((a, b) => b - a),
      );
      assert.equal((await fleet.status(wider)).phase, 'RolledBack');
      const stillNew = [...(await fleet.pods()).values()].filter((p) => p.imageID === NEW_ID).map((p) => p.name);
      assert.deepEqual(stillNew.sort(), [...upgradedFirst].sort());

      const back2 = fleet.start(['rollback', partial]);
      const exit4 = await exitOf(back2);
      assert.equal(exit4.code, 0, back2.stderr());
      assert.match(endOf(back2).message, /rolled back 2 pods/);

      for (const [name, p] of await fleet.pods()) {
        const was = before.get(name)!;
        assert.equal(p.imageID, was.imageID, `${name}: the old image ID again`);
        assert.equal(p.specImage, 'nginx:1.14.2', name);
        assert.notEqual(p.containerID, was.containerID, `${name}: restarted, in place`);
        assert.equal(p.gate, 'True', name);
        assert.equal(p.ready, true, name);
      }
      const stats = await fleet.stats();
      assert.equal(stats.requests['patch pods'], 20, 'one image patch per pod back');
      assert.ok((stats.maxNotReady.default ?? 0) <= 5, `maxNotReady during the rollback ${stats.maxNotReady.default}`);
    } finally {
      await fleet.close();
    }
  });
});
