// The pitfalls that trip in-place updaters (OpenKruise's CloneSet among them; bench/README.md says
// what it does in each), through the real `kwave run`:
// - a same-digest retag: the new tag names the content the pods already run, so no imageID
//   changes; an updater that waits for a new imageID never finishes. kwave counts a container
//   that restarted and reports the new tag as done.
// - A → bad → A: a plan moved to an image that cannot be pulled leaves its failed pods drained on
//   the bad spec; the same plan put back to A (a new revision) must bring every pod back in place
//   (same pod, one more restart, A's imageID) rather than stay stuck behind the failed revision.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';
import { OLD_ID } from './helpers/images.js';

describe('peer pitfalls: a same-digest retag, and A → bad → A', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ pods: 6 });
  });
  after(async () => fleet?.close());

  test('a same-digest retag completes: every pod restarted once, on the same imageID', async () => {
    const before = await fleet.pods();
    const plan = await fleet.writePlan(
      'retag.yaml',
      planYaml({ name: 'retag', image: 'nginx:1.14.2-retag', waves: '["100%"]', concurrency: 3, maxUnavailable: 3 }),
    );
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 0, run.stderr());
    assert.equal(endOf(run).phase, 'Completed');
    for (const [name, p] of await fleet.pods()) {
      assert.equal(p.specImage, 'nginx:1.14.2-retag', name);
      assert.equal(p.imageID, before.get(name)!.imageID, `${name}: same content, same imageID`);
      assert.equal(p.restartCount, before.get(name)!.restartCount + 1, `${name}: restarted once`);
      assert.ok(p.ready && p.gate === 'True', `${name}: back in service`);
    }
  });

  test('A → bad → A: the plan put back to A names the pods the failed revision holds; with --force every pod is back in place', async () => {
    const before = await fleet.pods();
    const bad = await fleet.writePlan(
      'web.yaml',
      planYaml({
        name: 'web',
        image: 'nginx:broken',
        waves: '["100%"]',
        concurrency: 2,
        maxUnavailable: 2,
        maxFailed: '100%',
        rollback: 'none',
      }),
    );
    const first = fleet.start(['run', bad]);
    const firstExit = await exitOf(first);
    assert.notEqual(firstExit.code, 0, 'the bad image fails its pods');
    const stuck = [...(await fleet.pods()).values()].filter((p) => p.specImage === 'nginx:broken');
    assert.ok(stuck.length > 0, 'pods left on the bad spec, drained');
    for (const p of stuck) assert.equal(p.ready, false, `${p.name}: failed pods stay out of service`);

    // The same plan, back to A: a new revision. Run plainly, it refuses (exit 2), naming each pod
    // the failed revision holds and the way out; with --force it rolls them back first.
    await fleet.writePlan(
      'web.yaml',
      planYaml({ name: 'web', image: 'nginx:1.14.2-retag', waves: '["100%"]', concurrency: 2, maxUnavailable: 2 }),
    );
    const refused = await fleet.kwave(['run', bad]);
    assert.equal(refused.code, 2, refused.stderr);
    for (const p of stuck)
      assert.match(
        refused.stderr,
        new RegExp(`default/${p.name} is mid-flight under revision \\w+ of this plan .*use --force`),
      );
    const back = fleet.start(['run', bad, '--force']);
    const backExit = await exitOf(back);
    assert.equal(backExit.code, 0, back.stderr());
    assert.equal(endOf(back).phase, 'Completed');
    for (const [name, p] of await fleet.pods()) {
      assert.equal(p.imageID, OLD_ID, `${name}: A's content again`);
      if (stuck.some((q) => q.name === name))
        assert.ok(p.restartCount > before.get(name)!.restartCount, `${name}: the same pod, restarted`);
      else assert.equal(p.restartCount, before.get(name)!.restartCount, `${name}: never left A, untouched`);
      assert.ok(p.ready && p.gate === 'True', `${name}: back in service`);
    }
  });
});
