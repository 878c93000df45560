import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { writeJsonInPieces } from '../../../src/cli/output/jsonPieces.js';

const written = (value: object) => {
  const pieces: string[] = [];
  writeJsonInPieces((text) => pieces.push(text), value);
  return pieces;
};

describe('writeJsonInPieces', () => {
  test("writes JSON.stringify's bytes for any plain data, undefined members and items included", () => {
    const member = fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.date({ noInvalidDate: true }));
    const data = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, member, fc.array(tie('node')), fc.dictionary(fc.string(), tie('node'))),
    })).node;
    fc.assert(
      fc.property(fc.oneof(fc.array(data), fc.dictionary(fc.string(), data)), (value) => {
        assert.equal(written(value).join(''), JSON.stringify(value));
      }),
      { numRuns: 500 },
    );
  });

  test('a large report comes in pieces of about 64 K characters, never whole', () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => ({
      namespace: 'default',
      name: `demo-${i}`,
      node: `node-${i % 3}`,
      zone: undefined,
    }));
    const report = {
      plan: 'bench',
      waves: [
        { wave: 1, pods: rows.slice(0, 1) },
        { wave: 2, pods: rows.slice(1) },
      ],
      skipped: [],
    };
    const pieces = written(report);
    assert.equal(pieces.join(''), JSON.stringify(report));
    assert.ok(pieces.length > 20, `${pieces.length} pieces`);
    assert.ok(Math.max(...pieces.map((p) => p.length)) < 70 * 1024);
  });
});
