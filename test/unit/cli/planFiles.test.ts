import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expandPlanArgs } from '../../../src/cli/planFiles.js';

test('a folder laid out as a mounted ConfigMap stands for its plan files, hidden entries skipped', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kwave-plans-'));
  try {
    mkdirSync(path.join(dir, '..2026_12_01'));
    for (const key of ['b.yaml', 'a.yml', 'notes.txt']) {
      writeFileSync(path.join(dir, '..2026_12_01', key), 'x');
      symlinkSync(`..data/${key}`, path.join(dir, key));
    }
    symlinkSync('..2026_12_01', path.join(dir, '..data'));
    assert.deepEqual(expandPlanArgs([dir, '/no/such.yaml']), [
      path.join(dir, 'a.yml'),
      path.join(dir, 'b.yaml'),
      '/no/such.yaml',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
