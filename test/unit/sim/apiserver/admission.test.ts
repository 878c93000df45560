// The simulator's admission rules: which request a `hold` rule with `skip` and `times` catches.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admission } from '../../../../src/sim/apiserver/admission.js';

test('skip lets the first matching writes answer at once; the next one is held until released', async () => {
  const a = new Admission();
  a.set([{ verb: 'patch', resource: 'pods/status', name: 'demo-1', hold: true, skip: 1, times: 1 }]);
  await a.afterWrite('patch', 'pods/status', 'demo-0'); // another pod: not matched
  await a.afterWrite('patch', 'pods/status', 'demo-1'); // the first: skipped
  assert.equal(a.current.held, 0);
  let answered = false;
  const second = a.afterWrite('patch', 'pods/status', 'demo-1').then(() => (answered = true));
  assert.equal(a.current.held, 1, 'the second gate write of demo-1 is held');
  assert.equal(answered, false);
  await a.afterWrite('patch', 'pods/status', 'demo-1'); // times: 1 is used up
  assert.equal(a.release(), 1);
  await second;
  assert.equal(answered, true);
  assert.deepEqual(a.current, {
    rules: [{ verb: 'patch', resource: 'pods/status', name: 'demo-1', hold: true, skip: 0, times: 0 }],
    held: 0,
    heldTotal: 1,
  });
});
