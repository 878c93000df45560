// The API paths kwave requests (src/cluster/paths.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { podsPath } from '../../../src/cluster/paths.js';

describe('podsPath', () => {
  test('builds the namespaced collection path', () => assert.equal(podsPath('web'), '/api/v1/namespaces/web/pods'));
  test('escapes the namespace', () => assert.equal(podsPath('a/b?c'), '/api/v1/namespaces/a%2Fb%3Fc/pods'));
  test('refuses an empty namespace', () => assert.throws(() => podsPath('')));
});
