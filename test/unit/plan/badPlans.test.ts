// The corpus of bad plans: every file must be refused with exactly the errors listed in
// test/fixtures/bad-plans/expected.ts — same lines, columns, paths, in the same order.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPlanFile, loadPlanText, MAX_PLAN_BYTES } from '../../../src/plan/load.js';
import { MAX_PLAN_TOKENS } from '../../../src/plan/yamlSource.js';
import { BAD_PLANS } from '../../fixtures/bad-plans/expected.js';

const DIR = fileURLToPath(new URL('../../fixtures/bad-plans/', import.meta.url));

describe('bad plans corpus', () => {
  test('every file in the folder has an expectation, and there are at least 30', () => {
    const files = readdirSync(DIR)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    assert.deepEqual(files, Object.keys(BAD_PLANS).sort());
    assert.ok(files.length >= 30, `only ${files.length} bad plans`);
  });

  for (const [file, expected] of Object.entries(BAD_PLANS)) {
    test(file, async () => {
      const result = await loadPlanFile(join(DIR, file));
      assert.equal(result.ok, false, 'the plan was accepted');
      if (result.ok) return;
      const got = result.errors.map((e) => [e.pos.line, e.pos.col, e.pos.path]);
      assert.deepEqual(
        got,
        expected.map(([line, col, path]) => [line, col, path]),
        JSON.stringify(result.errors, null, 1),
      );
      result.errors.forEach((e, i) => {
        const part = (expected[i] as [number, number, string, string])[3];
        assert.ok(e.message.includes(part), `message ${JSON.stringify(e.message)} lacks ${JSON.stringify(part)}`);
        assert.match(e.message, /^expected .+, found /, 'every message says what was expected and what was found');
        assert.equal(e.pos.file, join(DIR, file));
      });
    });
  }
});

describe('files refused before parsing', () => {
  test('a 2 MiB file is refused with its size, at 1:1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kwave-plan-'));
    try {
      const file = join(dir, 'huge.yaml');
      // Valid YAML all the way: only the size is wrong.
      writeFileSync(
        file,
        'apiVersion: kwave.dev/v1alpha1\n' + '# padding padding padding padding\n'.repeat((2 * MAX_PLAN_BYTES) / 34),
      );
      const result = await loadPlanFile(file);
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.errors.length, 1);
      const [err] = result.errors;
      assert.deepEqual([err?.pos.line, err?.pos.col, err?.pos.path], [1, 1, '']);
      assert.match(err?.message ?? '', /expected a plan file of at most 1 MiB, found 2\.0 MiB/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('text over 1 MiB handed in directly is refused too', () => {
    const result = loadPlanText('a: ' + 'x'.repeat(MAX_PLAN_BYTES), 'big.yaml');
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.errors[0]?.message ?? '', /at most 1 MiB/);
  });

  test('a file of exactly 1 MiB is not refused for its size', () => {
    const head = 'apiVersion: kwave.dev/v1alpha1\n';
    const result = loadPlanText(head + '#'.repeat(MAX_PLAN_BYTES - head.length), 'edge.yaml');
    assert.equal(result.ok, false);
    if (!result.ok) assert.doesNotMatch(result.errors[0]?.message ?? '', /1 MiB/);
  });

  test('a plan of more YAML tokens than the cap is refused before it is parsed, at the first token beyond it', () => {
    // 11 tokens of head, 3 per extra key ("extraN", ":", "N"): key 3,329 ends at token 9,998,
    // and "x", ":" are tokens 9,999 and 10,000.
    const head = 'apiVersion: kwave.dev/v1alpha1\nkind: RolloutPlan\nmetadata:\n  name: big\n';
    const keys = (n: number) =>
      Array.from({ length: n }, (_, i) => `extra${i}: ${i}  # a comment is no token`).join('\n');
    const within = loadPlanText(`${head}${keys(3329)}\nx:\n`, 'edge.yaml');
    assert.equal(within.ok, false);
    if (!within.ok) assert.notEqual(within.errors[0]?.code, 'PLAN_TOO_LARGE', 'token 10,000 is within the cap');
    const over = loadPlanText(`${head}${keys(3329)}\nx:  "y"\n`, 'big.yaml');
    assert.equal(over.ok, false);
    if (over.ok) return;
    assert.equal(over.errors.length, 1);
    const [err] = over.errors;
    assert.equal(err?.code, 'PLAN_TOO_LARGE');
    assert.deepEqual([err?.pos.line, err?.pos.col], [4 + 3329 + 1, 5]);
    assert.equal(
      err?.message,
      `expected a plan of at most ${MAX_PLAN_TOKENS.toLocaleString('en-US')} YAML tokens (keys, values and indicators such as "-" and ":"), found more: token 10,001 is here`,
    );
  });

  test('a missing file, a directory and bytes that are not UTF-8 are errors, not throws', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kwave-plan-'));
    try {
      const missing = await loadPlanFile(join(dir, 'nope.yaml'));
      assert.equal(missing.ok, false);
      if (!missing.ok) {
        assert.equal(missing.errors[0]?.pos.line, 0, 'no place in the text');
        assert.match(missing.errors[0]?.message ?? '', /found no such file/);
      }
      mkdirSync(join(dir, 'sub.yaml'));
      const directory = await loadPlanFile(join(dir, 'sub.yaml'));
      assert.equal(directory.ok, false);
      writeFileSync(join(dir, 'latin1.yaml'), Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]));
      const latin1 = await loadPlanFile(join(dir, 'latin1.yaml'));
      assert.equal(latin1.ok, false);
      if (!latin1.ok) assert.match(latin1.errors[0]?.message ?? '', /UTF-8/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
