// A broken image in wave 2 with `maxFailed: 0`, through the real `kwave run`: exit 3 naming the
// pod, its reason and the limit; the failed pod rolled back in place and Ready; no pod of wave 3
// touched; no pod left with its gate closed.
//
// How the image breaks in wave 2 only: a plan names one image for all pods, so the breakage is
// where a real one would be, in what a node pulls. Node `node-4`'s registry mirror lacks
// nginx:1.25.3 (fixture `nodes[].missingImages`): a pull there fails with ErrImagePull, as for a
// tag the mirror has not synced; the other nodes pull it fine. Of the plan's order (by name), the
// wave-2 pods are shop-b-0 … shop-b-2, and only shop-b-1 runs on node-4.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
nodes:
  - { name: node-1, zone: zone-a }
  - { name: node-2, zone: zone-b }
  - { name: node-3, zone: zone-c }
  - { name: node-4, zone: zone-d, missingImages: ["nginx:1.25.3"] }
workloads:
  - { name: shop-a, replicas: 1, labels: { app: shop }, containers: [{ name: nginx, image: "nginx:1.14.2" }], nodes: [node-1] }
  - { name: shop-b, replicas: 3, labels: { app: shop }, containers: [{ name: nginx, image: "nginx:1.14.2" }], nodes: [node-1, node-4, node-2] }
  - { name: shop-c, replicas: 16, labels: { app: shop }, containers: [{ name: nginx, image: "nginx:1.14.2" }], nodes: [node-1, node-2, node-3] }
`;

describe('kwave run: a broken image in wave 2 with maxFailed 0', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ fixture: FIXTURE, timeScale: 0.3 });
  });
  after(async () => fleet?.close());

  test('halts with exit 3, rolls the failed pod back to Ready, touches no pod of wave 3', async () => {
    const before = await fleet.pods('shop');
    assert.equal(before.get('shop-b-1')!.node, 'node-4');
    const plan = await fleet.writePlan(
      'shop.yaml',
      planYaml({
        name: 'shop',
        app: 'shop',
        waves: '[1, "20%", "60%", "100%"]',
        concurrency: 3,
        maxUnavailable: 3,
        maxFailed: 0,
        rollback: 'failed',
      }),
    );
    await fleet.resetStats();
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 3, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-2000)}`);

    // Waves 1 and 2 ran (targets 1 and 4 of 20); wave 3 never started.
    const waves = run.events.flatMap((e) => (e.event === 'wave-start' ? [[e.wave, e.pods]] : []));
    assert.deepEqual(waves, [
      [1, 1],
      [2, 3],
    ]);
    const halt = run.events.find((e) => e.event === 'halt');
    assert.ok(halt && halt.event === 'halt', 'a halt event');
    assert.equal(halt.wave, 2);
    assert.match(halt.message, /default\/shop-b-1 \(ErrImagePull\)/);
    assert.match(halt.message, /maxFailed 0/);
    const failed = run.events.find((e) => e.event === 'pod-end' && e.result === 'failed');
    assert.ok(failed && failed.event === 'pod-end');
    assert.equal(failed.pod, 'default/shop-b-1');
    assert.match(failed.message, /nginx:1\.25\.3/);
    const rollback = run.events.find((e) => e.event === 'rollback-start');
    assert.deepEqual(rollback && rollback.event === 'rollback-start' ? [rollback.pods, rollback.scope] : [], [
      1,
      'failed',
    ]);
    const rolledBack = run.events
      .filter((e) => e.event === 'pod-end' && e.result === 'rolled-back')
      .map((e) => (e.event === 'pod-end' ? e.pod : ''));
    assert.deepEqual(rolledBack, ['default/shop-b-1']);

    const end = endOf(run);
    assert.equal(end.phase, 'Halted');
    assert.equal(end.exitCode, 3);
    assert.match(end.message, /shop-b-1 \(ErrImagePull\)/);
    assert.match(end.message, /rolled back the failed pods/);
    assert.match(run.stderr() + run.stdout(), /shop-b-1/);

    const now = await fleet.pods('shop');
    // The failed pod: back on its old image, confirmed by image ID, gate open, Ready.
    const b1 = now.get('shop-b-1')!;
    assert.equal(b1.specImage, 'nginx:1.14.2');
    assert.equal(b1.imageID, OLD_ID);
    assert.equal(b1.gate, 'True');
    assert.equal(b1.ready, true);
    // Wave 1 and the rest of wave 2 were upgraded (they ran alongside the failure), or never started.
    for (const name of ['shop-a-0', 'shop-b-0', 'shop-b-2']) {
      const p = now.get(name)!;
      const was = before.get(name)!;
      if (name === 'shop-a-0' || p.containerID !== was.containerID) {
        assert.equal(p.imageID, NEW_ID, name);
        assert.equal(p.restartCount, was.restartCount + 1, name);
      } else {
        assert.equal(p.annotation, undefined, name);
      }
      assert.equal(p.ready, true, name);
    }
    // No pod of wave 3 (nor 4) touched: same container, no kwave state, no write at all.
    for (const [name, p] of now) {
      if (!name.startsWith('shop-c-')) continue;
      const was = before.get(name)!;
      assert.equal(p.containerID, was.containerID, name);
      assert.equal(p.restartCount, was.restartCount, name);
      assert.equal(p.annotation, undefined, name);
      assert.ok(!run.events.some((e) => 'pod' in e && e.pod === `default/${name}`), `no event names ${name}`);
    }
    // No pod left with its gate closed.
    for (const [name, p] of now) assert.equal(p.gate, 'True', `${name}: gate`);

    // kwave left Events on the failed pod: the failure and the rollback.
    const reasons = (await fleet.sim.events('default'))
      .filter((e) => (e as unknown as { involvedObject: { name: string } }).involvedObject.name === 'shop-b-1')
      .map((e) => (e as unknown as { reason: string }).reason);
    assert.ok(reasons.includes('InPlaceUpdateFailed'), reasons.join(','));
    assert.ok(reasons.includes('InPlaceRollback'), reasons.join(','));

    const record = await fleet.status(plan);
    assert.equal(record.phase, 'Halted');
    const stats = await fleet.stats();
    assert.ok((stats.maxNotReady.default ?? 0) <= 3, `maxNotReady ${stats.maxNotReady.default}`);
  });
});
