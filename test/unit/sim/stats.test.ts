// /sim/stats' high-water marks: per namespace, and over every namespace together (the budget of a
// plan over several namespaces is one number for all of them).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimStats } from '../../../src/sim/stats.js';

test('maxNotReadyTotal is the most pods not Ready at the same moment, not the sum of the per-namespace highs', () => {
  const s = new SimStats();
  s.setPodReady('a', 'a-0', false);
  s.setPodReady('a', 'a-1', false); // a: 2 at once, total 2
  s.setPodReady('a', 'a-0', true);
  s.setPodReady('a', 'a-1', true);
  s.setPodReady('b', 'b-0', false);
  s.setPodReady('b', 'b-1', false); // b: 2 at once, total 2 (a is back)
  assert.deepEqual(s.snapshot().maxNotReady, { a: 2, b: 2 });
  assert.equal(s.snapshot().maxNotReadyTotal, 2);
  s.setPodReady('a', 'a-2', false); // b 2 + a 1 at once
  assert.equal(s.snapshot().maxNotReadyTotal, 3);
});

test('reset restarts the total high-water mark from the pods not Ready now', () => {
  const s = new SimStats();
  for (const n of ['x-0', 'x-1', 'x-2']) s.setPodReady('x', n, false);
  s.setPodReady('x', 'x-0', true);
  s.setPodReady('y', 'y-0', false);
  assert.equal(s.snapshot().maxNotReadyTotal, 3);
  s.reset();
  assert.equal(s.snapshot().maxNotReadyTotal, 3, 'x-1, x-2 and y-0 are still not Ready');
  s.setPodReady('x', 'x-1', true);
  assert.equal(s.snapshot().maxNotReadyTotal, 3, 'a high-water mark does not go down');
  s.reset();
  assert.equal(s.snapshot().maxNotReadyTotal, 2, 'x-2 and y-0');
});
