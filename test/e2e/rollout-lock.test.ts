// One runner per plan: two real `kwave run` processes of the same plan started together; one
// takes the lease and runs, the other exits 2 naming the holder, having written nothing.
// The winner waits for approval after wave 1, so it holds the lease for as long as the loser takes
// to start on a slow machine (no pause to outlast); once the loser has exited, `kwave approve`
// lets the winner finish.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';

describe('kwave run: two runners of one plan', () => {
  test('one runs, the other exits 2 naming the holder', async () => {
    const fleet = await startFleet({ pods: 12, timeScale: 0.3 });
    try {
      const plan = await fleet.writePlan(
        'twice.yaml',
        planYaml({
          name: 'twice',
          waves: '[1, "100%"]',
          concurrency: 4,
          maxUnavailable: 4,
          gates: '    - { name: sign-off, afterWaves: [1], approval: true }\n',
        }),
      );
      await fleet.resetStats();
      const a = fleet.start(['run', plan]);
      const b = fleet.start(['run', plan]);
      // The winner cannot end before it is approved: the first to exit is the loser.
      const first = await Promise.race([
        exitOf(a).then((e) => ({ run: a, e })),
        exitOf(b).then((e) => ({ run: b, e })),
      ]);
      const [loser, winner] = first.run === a ? [a, b] : [b, a];
      assert.equal(first.e.code, 2, `the first to exit: ${first.e.code}\nA: ${a.stderr()}\nB: ${b.stderr()}`);
      await winner.waitFor((e) => e.event === 'gate-approval-wait', 'the winner waiting for approval');
      const approved = await fleet.kwave(['approve', plan]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.equal((await exitOf(winner)).code, 0, winner.stderr());

      assert.equal(endOf(winner).phase, 'Completed');
      assert.match(loser.stderr(), /plan "twice" is already being run by \S+@\S+ pid (\d+)/);
      const holderPid = Number(/pid (\d+)/.exec(loser.stderr())![1]);
      assert.equal(holderPid, winner.pid, 'the message names the running process');
      assert.match(loser.stderr(), /lease default\/kwave-twice/);
      assert.equal(loser.events.length, 0, 'the loser reported no rollout');

      const stats = await fleet.stats();
      assert.equal(stats.requests['patch pods'], 12, 'only the winner patched pods, each once');
      for (const [name, p] of await fleet.pods()) assert.equal(p.restartCount, 1, name);
    } finally {
      await fleet.close();
    }
  });
});
