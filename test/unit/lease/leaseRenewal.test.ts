// The lease's renewal schedule (pure): renew every fifth of the duration, retry a failure every
// 7.5th, never double a renewal in flight, in doubt at four fifths — before anyone could take over — and
// then reclaim every retry period.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { renewalPolicy, renewalStep, renewalTimeLimit, type RenewalState } from '../../../src/lease/leaseRenewal.js';

const policy = renewalPolicy(15);

describe('renewalPolicy', () => {
  test('15 s lease: renew every 3 s, retry every 2 s, in doubt at 12 s, look every second', () => {
    assert.deepEqual(policy, { renewEveryMs: 3000, retryEveryMs: 2000, renewDeadlineMs: 12_000, tickMs: 1000 });
  });
});

describe('renewalStep', () => {
  const cases: { name: string; state: RenewalState; step: ReturnType<typeof renewalStep> }[] = [
    { name: 'just renewed: wait', state: { nowMs: 1000, renewedAtMs: 0, inFlight: false }, step: 'wait' },
    {
      name: 'a fifth of the duration since: renew',
      state: { nowMs: 3000, renewedAtMs: 0, inFlight: false },
      step: 'renew',
    },
    {
      name: 'due but a renewal is in flight: wait for it',
      state: { nowMs: 7000, renewedAtMs: 0, inFlight: true },
      step: 'wait',
    },
    {
      name: 'failed 1 s ago: wait for the retry period',
      state: { nowMs: 6000, renewedAtMs: 0, inFlight: false, failedAtMs: 5000 },
      step: 'wait',
    },
    {
      name: 'failed 2 s ago: retry',
      state: { nowMs: 7000, renewedAtMs: 0, inFlight: false, failedAtMs: 5000 },
      step: 'renew',
    },
    {
      name: 'just before the renew deadline, failed 2 s ago: retry',
      state: { nowMs: 11_000, renewedAtMs: 0, inFlight: false, failedAtMs: 9000 },
      step: 'renew',
    },
    {
      name: 'the renew deadline, nothing in flight: in doubt',
      state: { nowMs: 12_000, renewedAtMs: 0, inFlight: false, failedAtMs: 11_000 },
      step: 'doubt',
    },
    {
      name: 'the renew deadline with a renewal still in flight: in doubt all the same',
      state: { nowMs: 12_000, renewedAtMs: 0, inFlight: true },
      step: 'doubt',
    },
    {
      name: 'in doubt: reclaim at once',
      state: { nowMs: 12_000, renewedAtMs: 0, inFlight: false, inDoubt: true },
      step: 'reclaim',
    },
    {
      name: 'in doubt, a reclaim in flight: wait for it',
      state: { nowMs: 20_000, renewedAtMs: 0, inFlight: true, inDoubt: true },
      step: 'wait',
    },
    {
      name: 'in doubt, the last reclaim failed 1 s ago: wait for the retry period',
      state: { nowMs: 20_000, renewedAtMs: 0, inFlight: false, failedAtMs: 19_000, inDoubt: true },
      step: 'wait',
    },
    {
      name: 'in doubt, the last reclaim failed 2 s ago: reclaim again, however long ago the last renewal',
      state: { nowMs: 600_000, renewedAtMs: 0, inFlight: false, failedAtMs: 598_000, inDoubt: true },
      step: 'reclaim',
    },
  ];
  for (const c of cases) test(c.name, () => assert.equal(renewalStep(c.state, policy), c.step));
});

describe('renewalTimeLimit', () => {
  test('a renewal may take until the renew deadline, and no longer', () => {
    assert.equal(renewalTimeLimit({ nowMs: 3000, renewedAtMs: 0 }, policy), 9000);
    assert.equal(renewalTimeLimit({ nowMs: 11_000, renewedAtMs: 0 }, policy), 1000);
    assert.equal(renewalTimeLimit({ nowMs: 14_000, renewedAtMs: 0 }, policy), 1);
  });
});
