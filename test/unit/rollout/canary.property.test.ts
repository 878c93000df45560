// Property: for random fleets, node faults, failures and waves, no gate is ever checked after a
// wave with fewer pods at the target than the wave's count, and every run ends (none waits for
// ever). The runner runs over the in-memory fleet; pods at target are counted on the fleet itself
// as each gate starts. Alongside, the pure wave step (waveFill.ts) driven by random pod fates.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isAtTarget } from '../../../src/inplace/atTarget.js';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import type { GateVerdict } from '../../../src/rollout/gateCheck.js';
import { runRollout } from '../../../src/rollout/runner.js';
import { waveStep } from '../../../src/rollout/waveFill.js';
import { resolveTargets } from '../../../src/rollout/waves.js';
import { fleet, fleetDeps, fleetNodes } from './fakeFleet.js';
import { loadPlan, planText } from '../helpers/plans.js';

const scenario = fc
  .record({
    pods: fc.integer({ min: 1, max: 8 }),
    nodes: fc.integer({ min: 1, max: 3 }),
    waves: fc.uniqueArray(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 3 }),
    toAll: fc.boolean(),
    concurrency: fc.integer({ min: 1, max: 3 }),
    maxUnavailable: fc.integer({ min: 1, max: 3 }),
    maxFailed: fc.integer({ min: 0, max: 2 }),
    broken: fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { maxLength: 3 }),
    downAtStart: fc.uniqueArray(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }),
    podsNotReady: fc.boolean(),
    /** A node lost as this pod's gate closes, and back (or not) as that pod ends. */
    lostMidFlight: fc.option(
      fc.record({ pod: fc.integer({ min: 0, max: 7 }), backAt: fc.option(fc.integer({ min: 0, max: 7 })) }),
    ),
  })
  .map((s) => ({ ...s, waves: [...s.waves].sort((a, b) => a - b) }));

describe('property: no gate judges a wave short of its count', () => {
  test('random fleets, node faults, failures and waves: every gate sees at least its wave target at the target; every run ends', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const waves = `[${s.waves.join(', ')}${s.toAll ? ', "100%"' : ''}]`;
        const plan = loadPlan(
          planText({
            name: 'p',
            strategy: `{ waves: ${waves}, concurrency: ${s.concurrency}, maxUnavailable: ${s.maxUnavailable} }`,
            failurePolicy: `{ maxFailed: ${s.maxFailed}, rollback: none }`,
            extra: '  gates: [{ name: g, pause: 0s }]\n',
          }),
        );
        const f = fleet(s.pods, { brokenPods: new Set(s.broken.map((i) => `web-${i}`)) });
        const n = fleetNodes(f, s.nodes);
        for (const i of s.downAtStart) if (i < s.nodes) n.down(`n${i}`, { podsNotReady: s.podsNotReady });
        const targets = resolveTargets(plan.strategy.waves, s.pods);
        const shortGates: string[] = [];
        const events: RolloutEvent[] = [];
        const d = fleetDeps(f, events);
        const lost = s.lostMidFlight;
        const nodeOf = (i: number) => `n${i % s.nodes}`;
        d.sink = (e) => {
          events.push(e);
          if (!lost) return;
          if (e.event === 'pod-step' && e.pod === `web/web-${lost.pod}` && e.step === 'close-gate')
            n.down(nodeOf(lost.pod));
          if (lost.backAt !== null && e.event === 'pod-end' && e.pod === `web/web-${lost.backAt}`)
            n.up(nodeOf(lost.pod));
        };
        const checkGate = async (_g: unknown, hooks: { wave: number }): Promise<GateVerdict> => {
          const atTarget = [...f.pods.values()].filter((q) => isAtTarget(q, plan)).length;
          const want = targets[hooks.wave - 1] ?? Infinity;
          if (atTarget < want) shortGates.push(`wave ${hooks.wave}: ${atTarget} at target, its count ${want}`);
          return { result: 'passed', message: 'g: passed' };
        };
        const bound = new Promise<'deadlock'>((resolve) => setTimeout(() => resolve('deadlock'), 20_000).unref());
        const r = await Promise.race([runRollout(plan, { ...d, checkGate, nodes: n.view }), bound]);
        const story = () => `${JSON.stringify(s)}\n${events.map((e) => JSON.stringify(e)).join('\n')}`;
        assert.notEqual(r, 'deadlock', `the run never ended: ${story()}`);
        assert.deepEqual(shortGates, [], `a gate judged a short wave: ${story()}`);
      }),
      { numRuns: 100 },
    );
  });

  test('the pure wave step: it says done only at the count, takes no more pods than the queue holds, and always ends', () => {
    // Pods taken from a queue each end upgraded, failed (or vanished), or wait for their node.
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 30 }),
        fc.array(fc.constantFrom('upgraded', 'failed', 'waits'), { minLength: 30, maxLength: 30 }),
        (target, queued0, fates) => {
          let atTarget = 0;
          let queued = queued0;
          let taken = 0;
          const pending: string[] = [];
          for (let steps = 0; steps < 200; steps++) {
            const step = waveStep({ target, atTarget, pending: pending.length, inFlight: 0, queued, stopping: false });
            if (step.kind === 'take') {
              assert.ok(step.count > 0 && step.count <= queued);
              for (let i = 0; i < step.count; i++) pending.push(fates[taken++ % fates.length]!);
              queued -= step.count;
            } else if (step.kind === 'wait') {
              assert.ok(pending.length > 0);
              if (pending.shift() === 'upgraded') atTarget++;
            } else {
              if (step.kind === 'done') assert.ok(atTarget >= target);
              if (step.kind === 'short') {
                assert.equal(queued, 0);
                assert.equal(step.missing, target - atTarget);
              }
              // Pods on their way count: a wave never upgrades more than its count.
              assert.ok(atTarget <= target);
              return;
            }
          }
          assert.fail('the wave step never ended');
        },
      ),
    );
  });
});
