// BudgetTracker keeps its not-Ready count incrementally: after any sequence of pod changes,
// starts, ends and rollback exemptions it answers as a fresh count over the three sets would.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { V1Pod } from '@kubernetes/client-node';
import { canStart } from '../../../src/rollout/budget.js';
import { BudgetTracker } from '../../../src/rollout/budgetTracker.js';

const pod = (name: string, ready: boolean): V1Pod =>
  ({
    metadata: { namespace: 'ns', name },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  }) as V1Pod;
const NAMES = ['a', 'b', 'c', 'd', 'e'];
const key = (n: string) => `ns/${n}`;

type Op =
  { kind: 'ready' | 'unready' | 'delete' | 'take' | 'release'; name: string } | { kind: 'exempt'; names: string[] };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('ready' as const, 'unready' as const, 'delete' as const, 'take' as const, 'release' as const),
    name: fc.constantFrom(...NAMES),
  }),
  fc.record({ kind: fc.constant('exempt' as const), names: fc.subarray(NAMES) }),
);

describe('BudgetTracker', () => {
  test('a pod whose gate is closed holds the budget while its Ready is stale (its kubelet cut off as the gate closed)', () => {
    const GATE = 'kwave.dev/in-place-ready';
    const withGate = (name: string, gate: 'True' | 'False'): V1Pod => {
      const p = pod(name, true);
      p.status!.conditions!.push({ type: GATE, status: gate });
      return p;
    };
    let feed: ((c: { pod: V1Pod; type: 'added' | 'modified' | 'deleted' }) => void) | undefined;
    const t = new BudgetTracker(
      ['a', 'b'].map((n) => ({ namespace: 'ns', name: n, pod: withGate(n, 'True') })),
      1,
      1,
      undefined,
      Date.now,
      GATE,
    );
    t.follow((l) => ((feed = l), () => {}));
    t.take(key('a'));
    feed!({ pod: withGate('a', 'False'), type: 'modified' }); // the gate closed; Ready never turned False
    t.release(key('a')); // its flow waits apart for its node
    assert.deepEqual(t.holders(key('b')), [key('a')]);
    assert.equal(t.request(key('b')).unreadyNotInFlight, 1, 'b may not start: a is drained');
    feed!({ pod: withGate('a', 'True'), type: 'modified' });
    assert.equal(t.request(key('b')).unreadyNotInFlight, 0);
  });

  test('the incremental not-Ready count (and the drain question) equals a fresh count, for any sequence of changes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        fc.array(op, { maxLength: 60 }),
        fc.constantFrom(...NAMES),
        (initial, ops, candidate) => {
          let feed: ((c: { pod: V1Pod; type: 'added' | 'modified' | 'deleted' }) => void) | undefined;
          const t = new BudgetTracker(
            NAMES.map((n, i) => ({ namespace: 'ns', name: n, pod: pod(n, initial[i]!) })),
            3,
            2,
          );
          t.follow((l) => ((feed = l), () => {}));
          const notReady = new Set(NAMES.filter((_, i) => !initial[i]).map(key));
          const inFlight = new Set<string>();
          let exempt = new Set<string>();
          for (const o of ops) {
            if (o.kind === 'exempt') {
              exempt = new Set(o.names.map(key));
              t.exemptWhileRollingBack(o.names.map(key));
            } else if (o.kind === 'take') {
              inFlight.add(key(o.name));
              t.take(key(o.name));
            } else if (o.kind === 'release') {
              inFlight.delete(key(o.name));
              t.release(key(o.name));
            } else {
              if (o.kind === 'unready') notReady.add(key(o.name));
              else notReady.delete(key(o.name));
              feed!({ pod: pod(o.name, o.kind === 'ready'), type: o.kind === 'delete' ? 'deleted' : 'modified' });
            }
            const expected = [...notReady].filter(
              (k) => !inFlight.has(k) && !exempt.has(k) && k !== key(candidate),
            ).length;
            assert.equal(t.request(key(candidate)).unreadyNotInFlight, expected);
            assert.equal(t.request(key(candidate)).inFlight, inFlight.size);
            // In flight and Ready at its drain: the start rule again, the pod counted once.
            const held = [...notReady].filter((k) => !inFlight.has(k) && !exempt.has(k)).length;
            assert.equal(t.mayDrain(key(candidate)), inFlight.has(key(candidate)) && held + inFlight.size <= 3);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the budget with a view that lags the cluster', () => {
  // The cluster's true readiness changes first; the tracker hears of each change later, in order
  // (a watch). The runner starts a pod only on the tracker's word, and ends a flow only once it
  // has seen the pod Ready again. Others make pods not Ready at any time. Whatever the lag, the
  // pods the rollout itself made unavailable never exceed the budget: more pods not Ready at once
  // than the budget are always others' doing (docs/rollout.md, "Across the fleet").
  type Step = { kind: 'start' | 'finish' | 'deliver' | 'other-down' | 'other-up'; pick: number };
  const step: fc.Arbitrary<Step> = fc.record({
    kind: fc.constantFrom(
      'start' as const,
      'finish' as const,
      'deliver' as const,
      'other-down' as const,
      'other-up' as const,
    ),
    pick: fc.nat(),
  });
  const PODS = Array.from({ length: 12 }, (_, i) => `p${i}`);

  test('property: pods the rollout made not Ready ≤ budget; the rest of any overshoot was made by others', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(step, { maxLength: 200 }),
        (budget, concurrency, steps) => {
          let feed: ((c: { pod: V1Pod; type: 'added' | 'modified' | 'deleted' }) => void) | undefined;
          const t = new BudgetTracker(
            PODS.map((n) => ({ namespace: 'ns', name: n, pod: pod(n, true) })),
            budget,
            concurrency,
          );
          t.follow((l) => ((feed = l), () => {}));
          const trueReady = new Map(PODS.map((n) => [n, true]));
          const seenReady = new Map(PODS.map((n) => [n, true]));
          const pending: { name: string; ready: boolean }[] = [];
          const inFlight = new Set<string>();
          /** In flight, started while the tracker saw it Ready: the rollout made it unavailable. */
          const madeUnready = new Set<string>();
          const otherDown = new Set<string>();
          const set = (name: string, ready: boolean) => {
            trueReady.set(name, ready);
            pending.push({ name, ready });
          };
          for (const s of steps) {
            const name = PODS[s.pick % PODS.length]!;
            if (s.kind === 'start' && !inFlight.has(name) && canStartFor(t, key(name))) {
              t.take(key(name));
              inFlight.add(name);
              if (seenReady.get(name)) madeUnready.add(name);
              set(name, false); // the gate closes
            } else if (s.kind === 'finish' && inFlight.has(name)) {
              if (!trueReady.get(name) && !otherDown.has(name)) set(name, true); // the gate reopens
              if (seenReady.get(name)) {
                inFlight.delete(name);
                madeUnready.delete(name);
                t.release(key(name));
              }
            } else if (s.kind === 'deliver' && pending.length > 0) {
              const c = pending.shift()!;
              seenReady.set(c.name, c.ready);
              feed!({ pod: pod(c.name, c.ready), type: 'modified' });
            } else if (s.kind === 'other-down' && !inFlight.has(name)) {
              otherDown.add(name);
              set(name, false);
            } else if (s.kind === 'other-up' && otherDown.delete(name) && !inFlight.has(name)) set(name, true);
            assert.ok(
              madeUnready.size <= budget,
              `the rollout made ${madeUnready.size} pods unavailable, budget ${budget}`,
            );
            const notReady = PODS.filter((n) => !trueReady.get(n));
            const others = notReady.filter((n) => !madeUnready.has(n)).length;
            assert.ok(notReady.length <= budget + others);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

function canStartFor(t: BudgetTracker, k: string): boolean {
  return canStart(t.request(k));
}
