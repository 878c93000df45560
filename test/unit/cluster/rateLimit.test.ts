import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket, chooseRateLimit } from '../../../src/cluster/rateLimit.js';

function clock(start = 0) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('TokenBucket (client-side QPS and burst)', () => {
  it('lets a burst go at once, then spaces requests 1/qps apart, in arrival order', () => {
    const c = clock();
    const bucket = new TokenBucket({ qps: 100, burst: 3 }, c.now);
    assert.deepEqual(
      [1, 2, 3].map(() => bucket.reserve()),
      [0, 0, 0],
    );
    // Empty now: each further request waits one more 10 ms slot behind the ones before it.
    assert.deepEqual(
      [4, 5, 6].map(() => Math.round(bucket.reserve())),
      [10, 20, 30],
    );
  });

  it('refills at qps up to burst, not beyond', () => {
    const c = clock();
    const bucket = new TokenBucket({ qps: 10, burst: 2 }, c.now);
    bucket.reserve();
    bucket.reserve();
    c.advance(60_000); // a long quiet spell refills only `burst` tokens
    assert.deepEqual([bucket.reserve(), bucket.reserve()], [0, 0]);
    assert.equal(Math.round(bucket.reserve()), 100);
  });

  it('pays the debt of waiting requests before a new one goes', () => {
    const c = clock();
    const bucket = new TokenBucket({ qps: 1, burst: 1 }, c.now);
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 1000);
    c.advance(500);
    assert.equal(bucket.reserve(), 1500); // behind the one waiting until t=1000
  });

  it('qps 0 is no limit', () => {
    const bucket = new TokenBucket({ qps: 0, burst: 0 }, () => 0);
    for (let i = 0; i < 10_000; i++) assert.equal(bucket.reserve(), 0);
  });

  it('take() sleeps the reserved time through the injected sleep', async () => {
    const c = clock();
    const slept: number[] = [];
    const bucket = new TokenBucket({ qps: 4, burst: 1 }, c.now);
    const sleep = async (ms: number) => {
      slept.push(ms);
      return true;
    };
    await bucket.take(sleep);
    await bucket.take(sleep);
    assert.deepEqual(slept, [250]);
  });

  it('refuses a negative qps and a burst below 1 with a limit on', () => {
    assert.throws(() => new TokenBucket({ qps: -1, burst: 1 }, () => 0), RangeError);
    assert.throws(() => new TokenBucket({ qps: 5, burst: 0 }, () => 0), RangeError);
    assert.throws(() => new TokenBucket({ qps: 5, burst: 1.5 }, () => 0), RangeError);
  });
});

describe('chooseRateLimit (flag over plan over default, per figure)', () => {
  const defaults = { qps: 5000, burst: 10000 };
  it('takes the default when nothing is set', () => {
    assert.deepEqual(chooseRateLimit({}, defaults), defaults);
  });
  it('takes the plan over the default and the flag over the plan, figure by figure', () => {
    assert.deepEqual(chooseRateLimit({ plan: { qps: 50, burst: 100 } }, defaults), { qps: 50, burst: 100 });
    assert.deepEqual(chooseRateLimit({ flags: { qps: 20 }, plan: { qps: 50, burst: 100 } }, defaults), {
      qps: 20,
      burst: 100,
    });
    assert.deepEqual(chooseRateLimit({ flags: { qps: 0 }, plan: { qps: 50 } }, defaults), { qps: 0, burst: 10000 });
  });
});
