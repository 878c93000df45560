// /sim/stats' not-Ready figures per namespace: the most at once and how long each pod was not
// Ready (p50, p95, max), from a reset on, with a clock the test moves.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { percentile, SimStats } from '../../../src/sim/stats.js';

describe('SimStats', () => {
  test('unreadySeconds: each pod once per spell, summed per pod; counted from the reset; an open spell up to now', () => {
    let now = 0;
    const s = new SimStats(() => now);
    s.setPodReady('web', 'a', false);
    now = 2000;
    s.reset(); // a's spell counts from here
    s.setPodReady('web', 'b', false);
    now = 3000;
    s.setPodReady('web', 'a', true); // a: 1 s since the reset
    s.setPodReady('web', 'b', true); // b: 1 s
    s.setPodReady('web', 'c', false);
    now = 6500;
    s.setPodReady('web', 'c', true); // c: 3.5 s
    s.setPodReady('web', 'b', false);
    now = 7000; // b again, open: +0.5 s → 1.5 s
    const snap = s.snapshot();
    assert.deepEqual(snap.unreadySeconds.web, { p50: 1.5, p95: 3.5, max: 3.5 });
    assert.equal(snap.maxNotReady.web, 2);
    assert.equal(snap.notReady.web, 1);
    s.reset();
    now = 7000;
    assert.deepEqual(s.snapshot().unreadySeconds.web, { p50: 0, p95: 0, max: 0 });
  });
  test('percentile is nearest-rank', () => {
    assert.equal(percentile([], 0.5), 0);
    assert.equal(percentile([1, 2, 3, 4], 0.5), 2);
    assert.equal(percentile([1, 2, 3, 4], 0.95), 4);
    assert.equal(percentile([5], 0.5), 5);
  });
});
