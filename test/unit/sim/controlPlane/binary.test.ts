import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildRecipe,
  controlPlaneCacheRoot,
  controlPlaneHash,
  controlPlaneSourceDir,
  findControlPlaneBinary,
  kubernetesVersion,
} from '../../../../src/sim/controlPlane/binary.js';

test('the module builds a Kubernetes 1.33 release and stamps that version', () => {
  const v = kubernetesVersion();
  assert.match(v, /^v1\.33\.\d+$/);
  assert.ok(
    buildRecipe(v).args.some((a) => a.includes(`version.gitVersion=${v}`) && a.includes('version.gitMinor=33')),
  );
});

test('the cache key changes with any source and with the recipe, and only then', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kwave-cp-src-'));
  try {
    cpSync(controlPlaneSourceDir(), dir, { recursive: true });
    const before = controlPlaneHash('r', dir);
    assert.equal(controlPlaneHash('r', dir), before);
    writeFileSync(join(dir, 'README.txt'), 'not a source');
    assert.equal(controlPlaneHash('r', dir), before);
    assert.notEqual(controlPlaneHash('r2', dir), before);
    writeFileSync(join(dir, 'extra.go'), 'package main\n');
    assert.notEqual(controlPlaneHash('r', dir), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('cache folder: KWAVE_CONTROL_PLANE_CACHE, else XDG_CACHE_HOME, else ~/.cache', () => {
  assert.equal(controlPlaneCacheRoot({ KWAVE_CONTROL_PLANE_CACHE: '/c' }), '/c');
  assert.equal(controlPlaneCacheRoot({ XDG_CACHE_HOME: '/x' }), '/x/kwave/control-plane');
  assert.match(controlPlaneCacheRoot({}), /\/\.cache\/kwave\/control-plane$/);
});

test('a missing build is explained with the command that makes it', () => {
  const found = findControlPlaneBinary({ KWAVE_CONTROL_PLANE_CACHE: join(tmpdir(), 'kwave-no-such-cache') });
  assert.ok('reason' in found);
  assert.match(found.reason, /not built .*run npm run build:control-plane/);
  const bad = findControlPlaneBinary({ KWAVE_CONTROL_PLANE_BIN: '/nonexistent/kwave-control-plane' });
  assert.ok('reason' in bad && /KWAVE_CONTROL_PLANE_BIN=\/nonexistent/.test(bad.reason));
});
