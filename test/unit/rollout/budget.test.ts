import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Amount } from '../../../src/plan/types.js';
import {
  canStart,
  exceedsMaxFailed,
  resolveBudget,
  resolveMaxFailed,
  startBlocker,
  type StartRequest,
} from '../../../src/rollout/budget.js';

const pct = (p: number): Amount => ({ kind: 'fraction', value: p / 100 });
const n = (v: number): Amount => ({ kind: 'count', value: v });

describe('resolveBudget', () => {
  const rows: { name: string; amount: Amount; selected: number; want: number }[] = [
    { name: '10% of 25 rounds down to 2', amount: pct(10), selected: 25, want: 2 },
    { name: '10% of 8 is 0.8, raised to 1 so a pod can start', amount: pct(10), selected: 8, want: 1 },
    { name: '29% of 100 is 29 despite floating point', amount: pct(29), selected: 100, want: 29 },
    { name: 'a count is taken as written', amount: n(3), selected: 200, want: 3 },
    { name: 'count 0 is raised to 1', amount: n(0), selected: 200, want: 1 },
    { name: '100% of 60 is 60', amount: pct(100), selected: 60, want: 60 },
    { name: 'no pods selected still gives 1', amount: pct(50), selected: 0, want: 1 },
  ];
  for (const r of rows) test(r.name, () => assert.equal(resolveBudget(r.amount, r.selected), r.want));
});

describe('resolveMaxFailed / exceedsMaxFailed', () => {
  test('maxFailed 0: the first failure halts', () => {
    const limit = resolveMaxFailed(n(0), 100);
    assert.equal(exceedsMaxFailed(0, limit), false);
    assert.equal(exceedsMaxFailed(1, limit), true);
  });
  test('10% of 15 = 1.5 → 1: the second failure halts', () => {
    const limit = resolveMaxFailed(pct(10), 15);
    assert.equal(limit, 1);
    assert.equal(exceedsMaxFailed(1, limit), false);
    assert.equal(exceedsMaxFailed(2, limit), true);
  });
  test('a share may resolve to 0 (no floor of 1)', () => assert.equal(resolveMaxFailed(pct(5), 10), 0));
});

describe('canStart', () => {
  const rows: { name: string; req: StartRequest; want: ReturnType<typeof startBlocker> }[] = [
    {
      name: 'idle fleet, budget 1: one pod may start',
      req: { unreadyNotInFlight: 0, inFlight: 0, budget: 1, concurrency: 1 },
      want: undefined,
    },
    {
      name: 'one in flight fills budget 1',
      req: { unreadyNotInFlight: 0, inFlight: 1, budget: 1, concurrency: 5 },
      want: 'budget',
    },
    {
      name: 'concurrency reached first',
      req: { unreadyNotInFlight: 0, inFlight: 2, budget: 10, concurrency: 2 },
      want: 'concurrency',
    },
    {
      name: 'budget 3, 1 crashing elsewhere, 1 in flight: 1+1+1 = 3 → start',
      req: { unreadyNotInFlight: 1, inFlight: 1, budget: 3, concurrency: 10 },
      want: undefined,
    },
    {
      name: 'budget 3, 2 crashing elsewhere, 1 in flight: 4 > 3 → wait',
      req: { unreadyNotInFlight: 2, inFlight: 1, budget: 3, concurrency: 10 },
      want: 'budget',
    },
    {
      name: 'budget 3, 3 unready before the rollout: nothing starts',
      req: { unreadyNotInFlight: 3, inFlight: 0, budget: 3, concurrency: 10 },
      want: 'budget',
    },
    {
      name: 'budget 5, 3 unready before, none in flight: one starts',
      req: { unreadyNotInFlight: 3, inFlight: 0, budget: 5, concurrency: 10 },
      want: undefined,
    },
    {
      name: 'budget below concurrency caps the parallelism',
      req: { unreadyNotInFlight: 0, inFlight: 2, budget: 2, concurrency: 10 },
      want: 'budget',
    },
    {
      name: 'budget 2, the candidate and 2 others drained by an earlier run: it starts (no more pods unavailable)',
      req: { unreadyNotInFlight: 2, inFlight: 0, budget: 2, concurrency: 2, candidateUnready: true },
      want: undefined,
    },
    {
      name: 'the same candidate Ready: wait for the budget',
      req: { unreadyNotInFlight: 2, inFlight: 0, budget: 2, concurrency: 2, candidateUnready: false },
      want: 'budget',
    },
    {
      name: 'a candidate not Ready still waits for the concurrency',
      req: { unreadyNotInFlight: 2, inFlight: 2, budget: 2, concurrency: 2, candidateUnready: true },
      want: 'concurrency',
    },
  ];
  for (const r of rows) {
    test(r.name, () => {
      assert.equal(startBlocker(r.req), r.want);
      assert.equal(canStart(r.req), r.want === undefined);
    });
  }

  test('property: starting pods one by one never exceeds the budget or the concurrency', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        (unready, budget, concurrency) => {
          let inFlight = 0;
          while (canStart({ unreadyNotInFlight: unready, inFlight, budget, concurrency })) inFlight++;
          assert.ok(inFlight <= concurrency);
          if (inFlight > 0) assert.ok(unready + inFlight <= budget);
          assert.equal(inFlight, Math.max(0, Math.min(concurrency, budget - unready)));
        },
      ),
    );
  });

  test('property: starting pods that are not Ready already never adds an unavailable pod', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        (unready, ready, budget, concurrency) => {
          // `unready` pods not Ready (drained, crashing), `ready` Ready ones: the unready start first, then the ready ones while the budget allows.
          let unavailable = unready;
          let inFlight = 0;
          let unreadyLeft = unready;
          while (
            unreadyLeft > 0 &&
            canStart({ unreadyNotInFlight: unreadyLeft - 1, inFlight, budget, concurrency, candidateUnready: true })
          ) {
            unreadyLeft--;
            inFlight++;
          }
          assert.equal(unreadyLeft + inFlight, unavailable, 'none of those starts made a pod unavailable');
          let readyLeft = ready;
          while (
            readyLeft > 0 &&
            canStart({ unreadyNotInFlight: unreadyLeft, inFlight, budget, concurrency, candidateUnready: false })
          ) {
            readyLeft--;
            inFlight++;
            unavailable++;
          }
          assert.ok(inFlight <= concurrency);
          assert.ok(
            unavailable <= Math.max(budget, unready),
            `unavailable ${unavailable}: never beyond the budget, or beyond what was unavailable already`,
          );
        },
      ),
    );
  });
});
