// `kwave validate` through the real CLI (`node bin/kwave.js`, built by `npm run build`, which
// `npm test` runs first): the example plans pass with exit 0; the bad plans fail with exit 2 and
// name every error's line and column.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { BAD_PLANS } from '../fixtures/bad-plans/expected.js';
import { CHILD_LIMITS, ROOT } from './helpers/kwaveBin.js';
import { noClusterOnReal } from './helpers/backend.js';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const BAD = 'test/fixtures/bad-plans';

async function kwave(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['bin/kwave.js', ...args], {
      cwd: ROOT,
      maxBuffer: 16 << 20,
      ...CHILD_LIMITS,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const examplePlans = readdirSync(ROOT + 'plans')
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => `plans/${f}`);
const badPlans = Object.keys(BAD_PLANS).map((f) => `${BAD}/${f}`);

describe('kwave validate', { concurrency: 2, skip: noClusterOnReal }, () => {
  test('every example plan is valid: exit 0, one OK line each with its revision', async () => {
    const { code, stdout } = await kwave('validate', ...examplePlans);
    assert.equal(code, 0, stdout);
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, examplePlans.length);
    for (const [i, file] of examplePlans.entries())
      assert.match(lines[i] ?? '', new RegExp(`^OK ${file} \\(plan [a-z0-9-]+, revision [0-9a-f]{10}\\)$`));
  });

  test('-o json: one object per file per line', async () => {
    const { code, stdout } = await kwave('validate', '-o', 'json', ...examplePlans, `${BAD}/bad-cel-syntax.yaml`);
    assert.equal(code, 2);
    const objects = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      objects.map((o) => [o.file, o.valid]),
      [...examplePlans.map((f) => [f, true]), [`${BAD}/bad-cel-syntax.yaml`, false]],
    );
    assert.deepEqual(objects[0]?.errors, []);
    assert.match(String(objects[0]?.revision), /^[0-9a-f]{10}$/);
    assert.deepEqual(objects.at(-1)?.errors, [
      {
        code: 'PLAN_INVALID_VALUE',
        line: 23,
        col: 35,
        path: 'spec.gates[0].prometheus.successCondition',
        message: 'expected a CEL condition over result, like "result < 0.01", found "result <": Unexpected token: EOF',
      },
    ]);
  });

  test('all bad plans at once: exit 2, every error as file:line:col CODE path, with a caret line', async () => {
    const { code, stdout } = await kwave('validate', ...badPlans);
    assert.equal(code, 2);
    for (const [file, errors] of Object.entries(BAD_PLANS)) {
      for (const [line, col, path] of errors) {
        const place = escapeRegExp(`${BAD}/${file}:${line}:${col} `);
        assert.match(
          stdout,
          new RegExp(`^${place}PLAN_[A-Z_]+ ${escapeRegExp(path ? path + ': ' : '')}expected `, 'm'),
        );
      }
      assert.match(stdout, new RegExp(`^FAIL ${BAD}/${file} \\(${errors.length} errors?\\)$`, 'm'));
    }
    assert.match(stdout, /^ +\| +\^$/m, 'carets under the columns');
    assert.doesNotMatch(stdout, /^OK /m);
  });

  test('all bad plans in JSON: each invalid, with exactly its expected places', async () => {
    const { code, stdout } = await kwave('validate', '-o', 'json', ...badPlans);
    assert.equal(code, 2);
    const byFile = new Map(
      stdout
        .trim()
        .split('\n')
        .map((l) => {
          const o = JSON.parse(l) as {
            file: string;
            valid: boolean;
            errors: { line: number; col: number; path: string }[];
          };
          return [o.file, o] as const;
        }),
    );
    for (const [file, errors] of Object.entries(BAD_PLANS)) {
      const o = byFile.get(`${BAD}/${file}`);
      assert.equal(o?.valid, false, file);
      assert.deepEqual(
        o?.errors.map((e) => [e.line, e.col, e.path]),
        errors.map(([l, c, p]) => [l, c, p]),
        file,
      );
    }
  });

  // One process per file for a sample of the kinds of mistakes (a process per file for all of
  // them would cost half a minute on a small machine; the runs above cover every file).
  const sample = [
    'empty.yaml',
    'alias-bomb.yaml',
    'duplicate-keys.yaml',
    'yaml-unclosed-flow.yaml',
    'bad-percentage-word.yaml',
    'decreasing-waves.yaml',
    'bad-image-digest.yaml',
    'unknown-field-typo.yaml',
  ];
  for (const file of sample) {
    test(`alone, ${file} exits 2 and prints its line:col`, async () => {
      const { code, stdout } = await kwave('validate', `${BAD}/${file}`);
      assert.equal(code, 2);
      const [line, col] = BAD_PLANS[file]?.[0] ?? [];
      assert.ok(stdout.startsWith(`${BAD}/${file}:${line}:${col} `), stdout);
    });
  }

  test('mixed valid and invalid plans: exit 2, the valid ones still say OK', async () => {
    const { code, stdout } = await kwave('validate', 'plans/demo.yaml', `${BAD}/empty.yaml`);
    assert.equal(code, 2);
    assert.match(stdout, /^OK plans\/demo\.yaml /m);
    assert.match(stdout, /^FAIL test\/fixtures\/bad-plans\/empty\.yaml \(1 error\)$/m);
  });

  test('a file that does not exist: exit 2, said plainly', async () => {
    const { code, stdout } = await kwave('validate', 'plans/no-such-plan.yaml');
    assert.equal(code, 2);
    assert.match(
      stdout,
      /^plans\/no-such-plan\.yaml PLAN_UNREADABLE expected a readable plan file, found no such file$/m,
    );
  });
});
