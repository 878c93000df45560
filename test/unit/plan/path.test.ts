// Field paths in plan errors (src/plan/path.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatPath } from '../../../src/plan/path.js';

describe('paths', () => {
  test('dotted paths with indices and quoted odd keys', () => {
    assert.equal(formatPath(['spec', 'gates', 0, 'name']), 'spec.gates[0].name');
    assert.equal(
      formatPath(['spec', 'target', 'selector', 'matchLabels', 'app.kubernetes.io/name']),
      'spec.target.selector.matchLabels["app.kubernetes.io/name"]',
    );
    assert.equal(formatPath([]), '');
  });
});
