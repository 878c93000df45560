// One runner per plan: two real `kwave run` processes of the same plan started together; one
// takes the lease and runs, the other exits 2 naming the holder, having written nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';

describe('kwave run: two runners of one plan', () => {
  test('one runs, the other exits 2 naming the holder', async () => {
    const fleet = await startFleet({ pods: 12, timeScale: 0.3 });
    try {
      // The pause keeps the winner holding the lease well past the loser's start.
      const plan = await fleet.writePlan(
        'twice.yaml',
        planYaml({ name: 'twice', waves: '[1, "100%"]', concurrency: 4, maxUnavailable: 4, gates: '    - { name: soak, afterWaves: [1], pause: 2s }\n' }),
      );
      await fleet.resetStats();
      const a = fleet.start(['run', plan]);
      const b = fleet.start(['run', plan]);
      const [ea, eb] = await Promise.all([exitOf(a), exitOf(b)]);
      const codes = [ea.code, eb.code];
      assert.deepEqual([...codes].sort(), [0, 2], `exits ${codes.join(', ')}\nA: ${a.stderr()}\nB: ${b.stderr()}`);
      const [winner, loser] = ea.code === 0 ? [a, b] : [b, a];

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
