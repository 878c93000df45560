import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesFields, parseFieldSelector } from '../../../../src/sim/apiserver/fieldSelector.js';
import { SelectorParseError } from '../../../../src/sim/apiserver/labelSelector.js';
import { RESOURCES } from '../../../../src/sim/apiserver/resources.js';
import type { KubeObject } from '../../../../src/sim/store.js';

const pods = RESOURCES.pods;
const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'a', namespace: 'web' },
  spec: { nodeName: 'n1' },
  status: { phase: 'Running' },
};
const matches = (s: string) => matchesFields(parseFieldSelector(s, pods.fields), pod, pods.fields);

describe('field selectors', () => {
  test('equality with =, == and != on supported fields', () => {
    assert.equal(matches('metadata.name=a'), true);
    assert.equal(matches('metadata.name==a'), true);
    assert.equal(matches('metadata.namespace!=web'), false);
    assert.equal(matches('spec.nodeName=n1,status.phase=Running'), true);
    assert.equal(matches('spec.nodeName=n1,status.phase!=Running'), false);
    assert.equal(matches('spec.nodeName='), false);
    assert.equal(matches(''), true);
  });

  test('an unsupported field is refused with the real message', () => {
    assert.throws(
      () => parseFieldSelector('spec.containers=x', pods.fields),
      (e: unknown) => e instanceof SelectorParseError && e.message === 'field label not supported: spec.containers',
    );
  });

  test('escaped commas and equals signs are part of the value', () => {
    const sel = parseFieldSelector('metadata.name=a\\,b\\=c', pods.fields);
    assert.deepEqual(sel, [{ field: 'metadata.name', op: 'equals', value: 'a,b=c' }]);
  });

  test('a term without an operator is refused', () => {
    assert.throws(() => parseFieldSelector('metadata.name', pods.fields), SelectorParseError);
  });

  test('nodes support spec.unschedulable, defaulting to false', () => {
    const node: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: {} };
    const f = RESOURCES.nodes.fields;
    assert.equal(matchesFields(parseFieldSelector('spec.unschedulable=false', f), node, f), true);
  });
});
