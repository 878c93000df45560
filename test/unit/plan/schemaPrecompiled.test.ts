// The plan schema is compiled at build time (scripts/build-schema.ts): loading a plan loads no
// part of ajv's compiler, and the validator it uses was built from the schema file beside it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { PLAN_SCHEMA_URL } from '../../../src/plan/schemaFile.js';
import { SCHEMA_SHA256 } from '../../../src/plan/schemaValidator.generated.js';

describe('the precompiled plan schema', () => {
  test('was built from schemas/plan.schema.json as it is now', () => {
    assert.equal(SCHEMA_SHA256, createHash('sha256').update(readFileSync(PLAN_SCHEMA_URL, 'utf8')).digest('hex'));
  });

  test("loading and validating a plan never loads ajv's compiler", () => {
    const script = `
      import { createRequire } from 'node:module';
      const { loadPlanFile } = await import('./dist/plan/load.js');
      const r = await loadPlanFile('plans/demo.yaml');
      if (!r.ok) throw new Error('demo plan invalid');
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/ajv/'));
      console.log(JSON.stringify(loaded));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const loaded = JSON.parse(run.stdout) as string[];
    assert.ok(loaded.length > 0, 'the runtime helpers of the generated validator are ajv files');
    assert.deepEqual(
      loaded.filter((k) => !k.includes('/ajv/dist/runtime/')),
      [],
      'only ajv/dist/runtime/* is loaded',
    );
  });
});
