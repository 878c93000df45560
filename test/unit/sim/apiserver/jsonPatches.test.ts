import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyJsonPatch, decodeJsonPatch } from '../../../../src/sim/apiserver/patch/json.js';
import { mergePatch } from '../../../../src/sim/apiserver/patch/merge.js';
import { applyPatch, patchTypeOf } from '../../../../src/sim/apiserver/patch/index.js';
import { ApiError } from '../../../../src/sim/apiserver/status.js';
import type { Json } from '../../../../src/sim/apiserver/json.js';

const doc = (): Json => ({
  metadata: { labels: { a: '1' }, resourceVersion: '5' },
  spec: { containers: [{ name: 'c', image: 'x:1' }] },
});
const jp = (ops: unknown, d: Json = doc()) => applyJsonPatch(d, decodeJsonPatch(ops));
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e.status.code;
    throw e;
  }
  return 0;
};

describe('JSON patch (RFC 6902)', () => {
  test('replace an image by index, guarded by a test of the resourceVersion', () => {
    const out = jp([
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'x:2' },
    ]) as { spec: { containers: { image: string }[] } };
    assert.equal(out.spec.containers[0]!.image, 'x:2');
  });

  test('a failed test is 422', () => {
    assert.equal(
      code(() => jp([{ op: 'test', path: '/metadata/resourceVersion', value: '4' }])),
      422,
    );
  });

  test('add, remove, move, copy; ~1 escapes a slash', () => {
    const out = jp([
      { op: 'add', path: '/metadata/labels/kwave.dev~1wave', value: '2' },
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'copy', from: '/spec/containers/0', path: '/spec/containers/-' },
      { op: 'move', from: '/metadata/labels', path: '/metadata/moved' },
    ]);
    assert.deepEqual(out, {
      metadata: { resourceVersion: '5', moved: { 'kwave.dev/wave': '2' } },
      spec: {
        containers: [
          { name: 'c', image: 'x:1' },
          { name: 'c', image: 'x:1' },
        ],
      },
    });
  });

  test('replace or remove of a missing path is 422', () => {
    assert.equal(
      code(() => jp([{ op: 'replace', path: '/spec/missing', value: 1 }])),
      422,
    );
    assert.equal(
      code(() => jp([{ op: 'remove', path: '/spec/containers/5' }])),
      422,
    );
  });

  test('a body that is not a patch is 400', () => {
    assert.equal(
      code(() => decodeJsonPatch({ op: 'add' })),
      400,
    );
    assert.equal(
      code(() => decodeJsonPatch([{ op: 'frobnicate', path: '/a' }])),
      400,
    );
    assert.equal(
      code(() => decodeJsonPatch([{ op: 'add', path: '/a' }])),
      400,
    );
  });
});

describe('JSON merge patch (RFC 7386)', () => {
  test('maps merge, null deletes, lists replace', () => {
    assert.deepEqual(mergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] }), {
      a: { c: 2, d: 3 },
      l: [3],
    });
  });
});

describe('patch content types', () => {
  test('the three patch types are accepted, with parameters', () => {
    assert.equal(patchTypeOf('application/merge-patch+json; charset=utf-8'), 'application/merge-patch+json');
    assert.equal(patchTypeOf('application/strategic-merge-patch+json'), 'application/strategic-merge-patch+json');
  });
  test('anything else is 415', () => {
    assert.equal(
      code(() => patchTypeOf('application/json')),
      415,
    );
    assert.equal(
      code(() => patchTypeOf('application/apply-patch+yaml')),
      415,
    );
    assert.equal(
      code(() => patchTypeOf(undefined)),
      415,
    );
  });
  test('a body that is not JSON is 400', () => {
    assert.equal(
      code(() => applyPatch('application/merge-patch+json', { kind: 'Pod' }, '{nope')),
      400,
    );
  });
});
