// Did-you-mean suggestions in plan errors (src/plan/suggest.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closestName } from '../../../src/plan/suggest.js';

describe('suggestions', () => {
  test('did you mean', () => {
    const known = ['waves', 'waveSize', 'concurrency', 'maxUnavailable'];
    assert.equal(closestName('maxUnavailble', known), 'maxUnavailable');
    assert.equal(closestName('wavesize', known), 'waveSize');
    assert.equal(closestName('concurency', known), 'concurrency');
    assert.equal(closestName('colour', known), undefined);
  });
});
