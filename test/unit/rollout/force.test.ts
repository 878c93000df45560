// `--force` through the runner: pods another revision left mid-flight are rolled back by that
// revision's flow first, as events (rollback-start forced, a pod-end each) under the plan's
// budget and concurrency, and only then does this revision start.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import { runRollout } from '../../../src/rollout/runner.js';
import { selectFleet } from '../../../src/rollout/select.js';
import { fleet, fleetDeps as deps } from './fakeFleet.js';
import { testPlan } from '../helpers/plans.js';

function plan(image: string, rollback: string) {
  return testPlan({
    name: 'p',
    image,
    strategy: '{ waves: ["100%"], concurrency: 2, maxUnavailable: 2 }',
    failurePolicy: `{ maxFailed: 1, rollback: ${rollback} }`,
  });
}

describe('runRollout with force', () => {
  test('rolls back the pods another revision left failed and drained, then upgrades all, within the budget', async () => {
    const f = fleet(4);
    // Revision 1 fails on two pods (maxFailed 1: the second halts it) and leaves them drained.
    const r1 = await runRollout(plan('nginx:broken', 'none'), deps(f, []));
    assert.equal(r1.exitCode, 3);
    const next = plan('nginx:1.25.3', 'failed');
    const stuck = selectFleet(next, f.view.list()).problems.filter((p) => p.kind === 'other-revision');
    assert.equal(stuck.length, 2);
    f.most.notReady = 0;
    const events: RolloutEvent[] = [];
    const force = stuck.map((p) => ({ namespace: 'web', name: p.pod!.split('/')[1]!, revision: p.revision! }));
    const r2 = await runRollout(next, { ...deps(f, events), force });
    assert.equal(r2.exitCode, 0, r2.message);
    const kinds = events.map((e) => e.event);
    assert.equal(kinds[0], 'rollback-start');
    assert.ok(events[0]!.event === 'rollback-start' && events[0]!.forced === true);
    const rolledBack = events
      .filter((e) => e.event === 'pod-end' && e.result === 'rolled-back')
      .map((e) => (e as { pod: string }).pod);
    assert.deepEqual(rolledBack.sort(), stuck.map((p) => p.pod).sort());
    const lastRollback = events.findLastIndex((e) => e.event === 'pod-end' && e.result === 'rolled-back');
    assert.ok(
      kinds.indexOf('rollout-start') > lastRollback,
      `the rollout starts after the forced rollbacks: ${kinds.join(' ')}`,
    );
    for (const [key, p] of f.pods) assert.equal(p.spec!.containers[0]!.image, 'nginx:1.25.3', key);
    assert.ok(f.most.notReady <= 2, `budget 2 held, saw ${f.most.notReady}`);
  });
});
