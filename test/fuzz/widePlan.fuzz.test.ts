// Wide and deep plans: the valid plans in plans/ with thousands of keys added at any level, long
// lists, and unknown keys nested deep, written in block or flow style. The loader must answer
// each with a plan or with at most 100 errors in text order that name a place (and a count of
// the rest), or refuse a plan of more tokens than the cap with one error, never throw; a sample goes through the real `kwave validate`: exit 2, the first
// errors, "… and N more errors".
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { MAX_PLAN_BYTES, MAX_REPORTED_ERRORS } from '../../src/plan/load.js';
import { pastTokenCap } from '../../src/plan/yamlSource.js';
import { runKwave } from './cli.js';
import { load } from './planCheck.js';
import { injection, oddString, params } from './runs.js';

const PLANS = join(import.meta.dirname, '../../plans');
const plans = await Promise.all(
  (await readdir(PLANS))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map(async (f) => parse(await readFile(join(PLANS, f), 'utf8')) as Record<string, unknown>),
);

/** Where the width goes: a mapping of the plan (by path), or a list in it. */
const PLACES: (string | number)[][] = [
  [],
  ['metadata'],
  ['spec'],
  ['spec', 'target'],
  ['spec', 'target', 'selector', 'matchLabels'],
  ['spec', 'strategy'],
  ['spec', 'update', 'containers'],
  ['spec', 'update', 'containers', 0],
  ['spec', 'gates'],
];

const key = fc.oneof(
  { weight: 4, arbitrary: fc.nat({ max: 1_000_000 }).map((i) => `extra${i}`) },
  fc.constantFrom('name', 'image', 'waves', 'concurrency', 'selector', 'gates', 'spec', 'apiVersion'),
  oddString,
  injection,
);

const leaf = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 20 }),
  fc.constant(null),
  fc.boolean(),
  fc.constantFrom('nginx:1.25.3', 'C_9', '150%', '5m'),
);

/** A value nested `depth` levels deep under keys (or lists) of its own. */
const nested = (depth: number, inList: boolean, value: unknown): unknown => {
  let v = value;
  for (let d = depth; d > 0; d--) v = inList && d % 2 === 0 ? [v] : { [`k${d}`]: v };
  return v;
};

const width = fc.record({
  plan: fc.nat(),
  place: fc.constantFrom(...PLACES),
  count: fc.integer({ min: 1, max: 4000 }),
  keys: fc.array(key, { minLength: 1, maxLength: 30 }),
  leaves: fc.array(leaf, { minLength: 1, maxLength: 10 }),
  depth: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 50, max: 80 })),
  inList: fc.boolean(),
  flow: fc.boolean(),
});

type Width = typeof width extends fc.Arbitrary<infer T> ? T : never;

/** The plan with `count` entries added at its place: keys to a mapping, items to a list. */
function widen(w: Width): string {
  const doc = structuredClone(plans[w.plan % plans.length]!);
  let at: unknown = doc;
  for (const seg of w.place) {
    const next = (at as Record<string | number, unknown>)[seg];
    if (typeof next !== 'object' || next === null) (at as Record<string | number, unknown>)[seg] = {};
    at = (at as Record<string | number, unknown>)[seg];
  }
  for (let i = 0; i < w.count; i++) {
    const value = nested(i === 0 ? w.depth : Math.min(w.depth, 8), w.inList, w.leaves[i % w.leaves.length]);
    if (Array.isArray(at)) at.push(value);
    else (at as Record<string, unknown>)[`${w.keys[i % w.keys.length]}${i >= w.keys.length ? i : ''}`] = value;
  }
  return stringify(doc, w.flow ? { collectionStyle: 'flow', lineWidth: 0 } : { lineWidth: 0 });
}

describe('wide and deep plans', () => {
  test('thousands of keys, long lists, deep nesting: a plan, or at most 100 placed errors and a count, never a throw', (t) => {
    fc.assert(
      fc.property(width, (w) => {
        const text = widen(w);
        fc.pre(Buffer.byteLength(text) <= MAX_PLAN_BYTES);
        const r = load(text);
        if (pastTokenCap(text) !== undefined) {
          assert.ok(!r.ok && r.errors.length === 1 && r.errors[0]!.code === 'PLAN_TOO_LARGE', 'over the token cap');
          return;
        }
        if (w.depth >= 64) assert.equal(r.ok, false, 'nesting over 64 levels is refused');
        if (!r.ok && r.moreErrors > 0) assert.equal(r.errors.length, MAX_REPORTED_ERRORS);
      }),
      params(t, 20),
    );
  });

  test('a wide plan through the real `kwave validate`: exit 2, 100 errors, "… and N more errors", the total', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kwave-wide-'));
    try {
      const doc = structuredClone(plans[0]!);
      for (let i = 0; i < 1000; i++) doc[`extra${i}`] = { nested: { deeper: i } };
      const file = join(dir, 'wide.yaml');
      await writeFile(file, stringify(doc));
      const text = await runKwave(['validate', file]);
      assert.equal(text.code, 2, text.stderr);
      const lines = text.stdout.trimEnd().split('\n');
      assert.equal(lines.filter((l) => / PLAN_UNKNOWN_FIELD extra\d+: /.test(l)).length, MAX_REPORTED_ERRORS);
      assert.deepEqual(lines.slice(-2), ['… and 900 more errors', `FAIL ${file} (1000 errors)`]);
      const json = await runKwave(['validate', file, '-o', 'json']);
      assert.equal(json.code, 2);
      const answer = JSON.parse(json.stdout) as { errors: { line: number }[]; moreErrors: number };
      assert.equal(answer.errors.length, MAX_REPORTED_ERRORS);
      assert.equal(answer.moreErrors, 900);
      assert.ok(answer.errors.every((e) => e.line > 0));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
