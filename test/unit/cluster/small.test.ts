import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { podsPath } from '../../../src/cluster/paths.js';
import { RequestCounter, type RequestRecord } from '../../../src/cluster/requestCounter.js';
import { compareResourceVersions, isKnownNewer, isKnownOlder } from '../../../src/cluster/resourceVersion.js';

describe('podsPath', () => {
  test('builds the namespaced collection path', () => assert.equal(podsPath('web'), '/api/v1/namespaces/web/pods'));
  test('escapes the namespace', () => assert.equal(podsPath('a/b?c'), '/api/v1/namespaces/a%2Fb%3Fc/pods'));
  test('refuses an empty namespace', () => assert.throws(() => podsPath('')));
});

describe('resourceVersion ordering', () => {
  test('compares integers numerically, not as text', () => {
    assert.equal(compareResourceVersions('9', '10'), -1);
    assert.equal(compareResourceVersions('10', '9'), 1);
    assert.equal(compareResourceVersions('7', '7'), 0);
    assert.equal(compareResourceVersions('123456789012345678901', '123456789012345678900'), 1);
  });
  test('cannot compare opaque versions', () => {
    assert.equal(compareResourceVersions('abc', '10'), undefined);
    assert.equal(compareResourceVersions(undefined, '10'), undefined);
    assert.equal(isKnownOlder('abc', '10'), false);
    assert.equal(isKnownNewer('abc', '10'), false);
  });
  test('known older / newer', () => {
    assert.equal(isKnownOlder('5', '6'), true);
    assert.equal(isKnownNewer('6', '5'), true);
    assert.equal(isKnownNewer('5', '5'), false);
  });
});

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
    assert.deepEqual(c.snapshot(), { 'get pods 200': 1, 'list pods error': 1, 'patch pods 409': 1, 'patch pods/status 200': 2 });
    assert.equal(seen.length, 4);
    assert.deepEqual(seen[2], { verb: 'patch', resource: 'pods', code: '409' });
    assert.equal(c.total({ verb: 'patch' }), 3);
    assert.equal(c.total({ resource: 'pods' }), 3);
    assert.equal(c.total({ code: '200' }), 3);
    assert.equal(c.total(), 5);
  });
});
