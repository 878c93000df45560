// Hostile simulator fixtures: random YAML, mutations of test/fixtures/sim/example.yaml, alias
// bombs, deep nesting, huge files. parseFixture answers each with a Fixture or a KwaveError
// (FIXTURE, exit 2) that names file:line:col, never another error; `kwave sim` exits 2.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { ExitCode, KwaveError } from '../../src/errors.js';
import { loadFixture, parseFixture } from '../../src/sim/fixture.js';
import { runKwave } from './cli.js';
import { injection, oddString, params } from './runs.js';

const EXAMPLE = await readFile(join(import.meta.dirname, '../fixtures/sim/example.yaml'), 'utf8');

function parsesOrRefuses(text: string): 'ok' | 'refused' {
  try {
    parseFixture(text, 'f.yaml');
    return 'ok';
  } catch (err) {
    if (!(err instanceof KwaveError)) throw new Error(`not a KwaveError: ${(err as Error)?.stack ?? String(err)}`);
    assert.equal(err.code, 'FIXTURE');
    assert.equal(err.exitCode, ExitCode.BAD_INPUT);
    assert.equal(err.pos?.file, 'f.yaml');
    assert.ok((err.pos?.line ?? 0) >= 1, `line ${err.pos?.line}`);
    assert.ok(err.message.length > 0);
    return 'refused';
  }
}

function paths(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...prefix, i])));
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...prefix, k]));
  return out;
}

const value = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  oddString,
  injection,
  fc.constantFrom(-1, 0, 1e9, 1e308, 0.5, 'fail', 'nginx:broken', '100%'),
);

describe('hostile fixtures', () => {
  test('structural mutations of the example fixture', (t) => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), value, fc.boolean()), { minLength: 1, maxLength: 3 }), (ms) => {
        const doc = parse(EXAMPLE) as Record<string, unknown>;
        for (const [at, v, remove] of ms) {
          const all = paths(doc).filter((p) => p.length > 0);
          const path = all[at % all.length]!;
          let parent = doc as Record<string | number, unknown>;
          for (const seg of path.slice(0, -1)) parent = parent[seg] as Record<string | number, unknown>;
          if (remove) delete parent[path[path.length - 1]!];
          else parent[path[path.length - 1]!] = v;
        }
        parsesOrRefuses(stringify(doc));
      }),
      params(t, 60),
    );
  });

  test('text mutations and random YAML', (t) => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat({ max: 30 }),
        fc.oneof(oddString, injection, fc.constantFrom('[', '{', ': ', '- ', '&a ', '*a', '!!binary ', '\t', '---\n')),
        (at, len, token) => {
          const i = at % EXAMPLE.length;
          parsesOrRefuses(EXAMPLE.slice(0, i) + token + EXAMPLE.slice(i + len));
          parsesOrRefuses(token.repeat(len));
        },
      ),
      params(t, 60),
    );
  });

  test('alias bombs, unresolved aliases, deep nesting and huge files are bad input', async (t) => {
    const bomb = (w: number, d: number) =>
      Array.from(
        { length: d },
        (_, i) => `l${i}: &l${i} [${Array.from({ length: w }, () => (i === 0 ? '"x"' : `*l${i - 1}`)).join(', ')}]`,
      ).join('\n');
    fc.assert(
      fc.property(fc.integer({ min: 5, max: 12 }), fc.integer({ min: 5, max: 10 }), (w, d) => {
        assert.equal(parsesOrRefuses(bomb(w, d)), 'refused');
      }),
      params(t, 10),
    );
    assert.equal(parsesOrRefuses('nodes: *missing\n'), 'refused');
    assert.equal(parsesOrRefuses('['.repeat(50_000)), 'refused');
    assert.equal(parsesOrRefuses('a: ' + 'x'.repeat(5 * 1024 * 1024)), 'refused');
    const dir = await mkdtemp(join(tmpdir(), 'kwave-fixture-fuzz-'));
    try {
      const big = join(dir, 'big.yaml');
      await writeFile(big, '# ' + 'x'.repeat(10 * 1024 * 1024));
      await assert.rejects(loadFixture(big), (err) => err instanceof KwaveError && /at most 4 MiB/.test(err.message));
      const bad = join(dir, 'bomb.yaml');
      await writeFile(bad, bomb(10, 10));
      const r = await runKwave(['sim', '--fixture', bad]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /bomb\.yaml:\d+:\d+ .*alias/);
      assert.doesNotMatch(r.stderr, /internal error|\n\s+at /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
