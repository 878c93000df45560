// Ordering resourceVersions (src/cluster/resourceVersion.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compareResourceVersions, isKnownNewer, isKnownOlder } from '../../../src/cluster/resourceVersion.js';

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
