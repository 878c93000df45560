// Counting requests by verb, resource and code (src/cluster/requestCounter.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestCounter, type RequestRecord } from '../../../src/cluster/requestCounter.js';

describe('RequestCounter', () => {
  test('counts by verb, resource and code, and tells listeners', () => {
    const c = new RequestCounter();
    const seen: RequestRecord[] = [];
    const off = c.onRequest((r) => seen.push(r));
    c.record('patch', 'pods/status', 200);
    c.record('patch', 'pods/status', 200);
    c.record('patch', 'pods', 409);
    c.record('list', 'pods', 'error');
    off();
    c.record('get', 'pods', 200);
    assert.deepEqual(c.snapshot(), {
      'get pods 200': 1,
      'list pods error': 1,
      'patch pods 409': 1,
      'patch pods/status 200': 2,
    });
    assert.equal(seen.length, 4);
    assert.deepEqual(seen[2], { verb: 'patch', resource: 'pods', code: '409' });
    assert.equal(c.total({ verb: 'patch' }), 3);
    assert.equal(c.total({ resource: 'pods' }), 3);
    assert.equal(c.total({ code: '200' }), 3);
    assert.equal(c.total(), 5);
  });
});
