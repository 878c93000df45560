// A changed plan while pods of the old revision are mid-flight: refused (exit 2, naming the
// revision) unless --force, which first rolls those pods back with the old revision's own flow
// (checked on the cluster: restartCount, the rollback Event, the count of image patches).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultDigest } from '../../src/sim/images.js';
import { exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';

const NEW_ID = `docker.io/library/nginx@${defaultDigest('docker.io/library/nginx:1.25.3')}`;

describe('kwave run --force', () => {
  test('refuses a new revision while the old one has pods mid-flight; --force rolls them back, then runs', async () => {
    const fleet = await startFleet({ pods: 6 });
    try {
      // Revision 1 patches two pods to an image that is never ready in time, then dies.
      const slow = await fleet.writePlan('web.yaml', planYaml({ name: 'web', image: 'nginx:slow', waves: '["100%"]', concurrency: 2, maxUnavailable: 2 }));
      const first = fleet.start(['run', slow]);
      await first.waitFor((e) => e.event === 'pod-step' && e.step === 'wait-complete' && first.events.filter((x) => x.event === 'pod-step' && x.step === 'wait-complete').length >= 2, 'two pods patched');
      first.child.kill('SIGKILL');
      await exitOf(first);
      const stuck = [...(await fleet.pods()).values()].filter((p) => p.specImage === 'nginx:slow').map((p) => p.name);
      assert.equal(stuck.length, 2);

      // Revision 2 of the same plan: refused while those pods are mid-flight.
      const good = await fleet.writePlan('web.yaml', planYaml({ name: 'web', image: 'nginx:1.25.3', waves: '["100%"]', concurrency: 2, maxUnavailable: 2 }));
      const refused = await fleet.kwave(['run', good, '--metrics-address', 'off']);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /mid-flight under revision \S+ of this plan .*--force/);

      const beforeForce = await fleet.pods();
      await fleet.resetStats();
      const forced = await fleet.kwave(['run', good, '--force', '--metrics-address', 'off']);
      assert.equal(forced.code, 0, forced.stderr);
      for (const name of stuck) assert.match(forced.stderr, new RegExp(`--force: default/${name} \\(revision \\S+\\): rolled back`));
      // What the cluster shows, not what kwave says: each stuck pod got a rollback Event, and one
      // more container restart (back to the old image) than the others before its upgrade.
      for (const p of (await fleet.pods()).values()) {
        assert.equal(p.imageID, NEW_ID, `${p.name} runs the new image`);
        assert.equal(p.gate, 'True', `${p.name} gate open`);
        const restarts = p.restartCount - beforeForce.get(p.name)!.restartCount;
        assert.equal(restarts, stuck.includes(p.name) ? 2 : 1, `${p.name}: container restarts during the forced run`);
        const rollbacks = (await fleet.events('default', p.name)).filter((e) => e.reason === 'InPlaceRollback');
        assert.equal(rollbacks.length, stuck.includes(p.name) ? 1 : 0, `${p.name}: InPlaceRollback Events`);
      }
      // One image patch per pod, and one more for each stuck pod's rollback.
      const requests = (await fleet.stats()).requests;
      assert.equal(requests['patch pods'], 6 + stuck.length, JSON.stringify(requests));
    } finally {
      await fleet.close();
    }
  });
});
