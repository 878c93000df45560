// `kwave rollback` under remote control (`kwave pause | resume | abort`): the runner over the
// in-memory fleet, first upgraded by a real run, then rolled back with a RemoteControl set by
// hand. What is checked is on the fleet (images), not only the runner's events.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import { rollbackRollout, runRollout } from '../../../src/rollout/runner.js';
import { abortAtFirstPodStart, fleet, remote } from './fakeFleet.js';
import { testPlan } from '../helpers/plans.js';

function plan() {
  return testPlan({ name: 'p', strategy: '{ waves: [1, "100%"], concurrency: 1, maxUnavailable: 1 }' });
}

/** A fleet of `n` pods that a run of the plan upgraded. */
async function upgraded(n: number) {
  const f = fleet(n);
  const p = plan();
  const base = { writer: f.writer, view: f.view, sleep: async () => true, stop: new AbortController().signal };
  const up = await runRollout(p, { ...base, sink: () => undefined });
  assert.equal(up.phase, 'Completed');
  return { f, p, base };
}

const images = (f: ReturnType<typeof fleet>) => [...f.pods.values()].map((p) => p.spec!.containers[0]!.image ?? '');

describe('kwave rollback under remote control', () => {
  test('a pause standing at the start holds every revert until resumed; then every pod is reverted', async () => {
    const { f, p, base } = await upgraded(4);
    const events: RolloutEvent[] = [];
    const rc = remote();
    rc.state.paused = { by: 'alice@laptop', at: '2026-12-01T12:00:00.000Z' };
    let imagesWhilePaused: string[] = [];
    const sink = (e: RolloutEvent) => {
      events.push(e);
      // Resumed a turn later: had the pause not held, a revert would have started in between.
      if (e.event === 'paused')
        setImmediate(() => {
          imagesWhilePaused = images(f);
          rc.state.paused = undefined;
          rc.state.resumed = { by: 'bob@desk', at: '2026-12-01T12:00:05.000Z' };
          rc.fire();
        });
    };
    const r = await rollbackRollout(p, { ...base, sink, control: rc.control });
    assert.equal(r.phase, 'RolledBack');
    assert.equal(r.exitCode, 0);
    assert.deepEqual(
      imagesWhilePaused,
      ['nginx:1.25.3', 'nginx:1.25.3', 'nginx:1.25.3', 'nginx:1.25.3'],
      'nothing reverted while paused',
    );
    const kinds = events.map((e) => e.event);
    assert.ok(kinds.indexOf('paused') < kinds.indexOf('resumed'));
    assert.ok(
      kinds.indexOf('resumed') < kinds.indexOf('pod-start'),
      `no revert started before resume: ${kinds.join(', ')}`,
    );
    assert.deepEqual(images(f), ['nginx:1.14.2', 'nginx:1.14.2', 'nginx:1.14.2', 'nginx:1.14.2']);
  });

  test('an abort while the first revert is in flight: it finishes, no other pod starts reverting, Halted, exit 3', async () => {
    const { f, p, base } = await upgraded(4);
    const events: RolloutEvent[] = [];
    const rc = remote();
    const sink = abortAtFirstPodStart(rc, events);
    const r = await rollbackRollout(p, { ...base, sink, control: rc.control });
    assert.equal(r.exitCode, 3);
    assert.equal(r.phase, 'Halted');
    assert.match(
      r.message,
      /^rollback halted: aborted by ops@ci \(kwave abort at 2026-12-01T12:00:00\.000Z\); 1 pod rolled back, the rest still run the new image; run kwave rollback again to finish$/,
    );
    const halt = events.find((e) => e.event === 'halt');
    assert.equal(halt?.event === 'halt' && halt.reason, 'aborted');
    assert.equal(events.filter((e) => e.event === 'pod-start').length, 1);
    assert.deepEqual(
      images(f).sort(),
      ['nginx:1.14.2', 'nginx:1.25.3', 'nginx:1.25.3', 'nginx:1.25.3'],
      'the pod in flight was reverted, and only it',
    );
    // The rest are reverted by the next kwave rollback.
    const again = await rollbackRollout(p, { ...base, sink: () => undefined });
    assert.equal(again.phase, 'RolledBack');
    assert.deepEqual(images(f), ['nginx:1.14.2', 'nginx:1.14.2', 'nginx:1.14.2', 'nginx:1.14.2']);
  });
});
