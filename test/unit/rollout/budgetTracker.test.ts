// BudgetTracker keeps its not-Ready count incrementally: after any sequence of pod changes,
// starts, ends and rollback exemptions it answers as a fresh count over the three sets would.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { V1Pod } from '@kubernetes/client-node';
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

  test('the incremental not-Ready count equals a fresh count, for any sequence of changes', () => {
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
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
