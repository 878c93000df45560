import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildRecipe,
  cachedBinaryPath,
  controlPlaneCacheRoot,
  controlPlaneHash,
  findControlPlaneBinary,
} from '../../../../src/sim/controlPlane/binary.js';
import { controlPlaneSourceDir, kubernetesReleases } from '../../../../src/sim/controlPlane/releases.js';

const [oldest, newest] = [kubernetesReleases()[0]!, kubernetesReleases().at(-1)!];

test("each release's build selects its module file and build tag and stamps its version", () => {
  for (const release of kubernetesReleases()) {
    const { args, recipe } = buildRecipe(release);
    assert.ok(args.includes(`-modfile=${release.modFile}`), args.join(' '));
    assert.ok(args.includes(`-tags=kubernetes${release.minor}`), args.join(' '));
    const [, minor] = release.minor.split('.');
    assert.ok(args.some((a) => a.includes(`version.gitVersion=${release.version}`) && a.includes(`gitMinor=${minor}`)));
    assert.ok(recipe.includes(`-modfile=${release.modFile}`));
  }
});

test('the cache key changes with any source of the release and with the recipe, and only then', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kwave-cp-src-'));
  try {
    cpSync(controlPlaneSourceDir(), dir, { recursive: true });
    const before = controlPlaneHash('r', newest, dir);
    assert.equal(controlPlaneHash('r', newest, dir), before);
    writeFileSync(join(dir, 'README.txt'), 'not a source');
    assert.equal(controlPlaneHash('r', newest, dir), before);
    assert.notEqual(controlPlaneHash('r2', newest, dir), before);
    // Another release's module file is not a source of this one.
    const oldestBefore = controlPlaneHash('r', oldest, dir);
    writeFileSync(join(dir, oldest.modFile), '// changed\n', { flag: 'a' });
    assert.equal(controlPlaneHash('r', newest, dir), before);
    assert.notEqual(controlPlaneHash('r', oldest, dir), oldestBefore);
    writeFileSync(join(dir, 'extra.go'), 'package main\n');
    assert.notEqual(controlPlaneHash('r', newest, dir), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('each release is cached in a folder of its own', () => {
  const env = { KWAVE_CONTROL_PLANE_CACHE: '/c' };
  assert.notEqual(cachedBinaryPath(oldest, env), cachedBinaryPath(newest, env));
});

test('cache folder: KWAVE_CONTROL_PLANE_CACHE, else XDG_CACHE_HOME, else ~/.cache', () => {
  assert.equal(controlPlaneCacheRoot({ KWAVE_CONTROL_PLANE_CACHE: '/c' }), '/c');
  assert.equal(controlPlaneCacheRoot({ XDG_CACHE_HOME: '/x' }), '/x/kwave/control-plane');
  assert.match(controlPlaneCacheRoot({}), /\/\.cache\/kwave\/control-plane$/);
});

test('a missing build is explained with the command that makes that release', () => {
  const env = { KWAVE_CONTROL_PLANE_CACHE: join(tmpdir(), 'kwave-no-such-cache') };
  const found = findControlPlaneBinary(env, oldest.minor);
  assert.ok('reason' in found);
  assert.match(
    found.reason,
    new RegExp(`not built .*run npm run build:control-plane -- --kubernetes ${oldest.minor}$`),
  );
  const bad = findControlPlaneBinary({ KWAVE_CONTROL_PLANE_BIN: '/nonexistent/kwave-control-plane' });
  assert.ok('reason' in bad && /KWAVE_CONTROL_PLANE_BIN=\/nonexistent/.test(bad.reason));
  const unknown = findControlPlaneBinary(env, '1.20');
  assert.ok('reason' in unknown && /--kubernetes 1\.20: .*builds 1\.33 \(v1\.33\.\d+\), 1\.37/.test(unknown.reason));
});
