import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubernetesReleases, pickRelease } from '../../../../src/sim/controlPlane/releases.js';

test('the module builds Kubernetes 1.33 (versions/1.33.mod) and 1.37 (go.mod), oldest first', () => {
  const releases = kubernetesReleases();
  assert.deepEqual(
    releases.map((r) => [r.minor, r.modFile, r.sumFile]),
    [
      ['1.33', 'versions/1.33.mod', 'versions/1.33.sum'],
      ['1.37', 'go.mod', 'go.sum'],
    ],
  );
  for (const r of releases) assert.match(r.version, new RegExp(`^v${r.minor.replace('.', '\\.')}\\.\\d+$`));
});

/** A module folder with go.mod at `newest` and versions/*.mod at each of `older`. */
function moduleDir(newest: string, older: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'kwave-releases-'));
  const mod = (v: string) => `module m\n\nrequire (\n\tk8s.io/kubernetes v${v}\n)\n`;
  writeFileSync(join(dir, 'go.mod'), mod(newest));
  mkdirSync(join(dir, 'versions'));
  for (const v of older) writeFileSync(join(dir, 'versions', `${v.split('.').slice(0, 2).join('.')}.mod`), mod(v));
  return dir;
}

test('releases sort by version, 1.9 before 1.10; no folder, no releases', () => {
  const dir = moduleDir('1.10.1', ['1.9.3']);
  try {
    assert.deepEqual(
      kubernetesReleases(dir).map((r) => r.version),
      ['v1.9.3', 'v1.10.1'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(kubernetesReleases(join(tmpdir(), 'kwave-no-such-module')), []);
});

test('a release is picked by its minor, v-prefixed or its full version; default KWAVE_KUBERNETES, else the newest', () => {
  const dir = moduleDir('1.37.2', ['1.33.13']);
  const minorOf = (r: ReturnType<typeof pickRelease>) => ('reason' in r ? r.reason : r.minor);
  try {
    assert.equal(minorOf(pickRelease(undefined, {}, dir)), '1.37');
    assert.equal(minorOf(pickRelease(undefined, { KWAVE_KUBERNETES: '1.33' }, dir)), '1.33');
    assert.equal(minorOf(pickRelease(undefined, { KWAVE_KUBERNETES: '' }, dir)), '1.37');
    for (const name of ['1.33', 'v1.33', '1.33.13', 'v1.33.13', ' 1.33 '])
      assert.equal(minorOf(pickRelease(name, { KWAVE_KUBERNETES: '1.37' }, dir)), '1.33', name);
    assert.equal(
      minorOf(pickRelease('1.33.9', {}, dir)),
      "--kubernetes 1.33.9: kwave's control plane builds 1.33 (v1.33.13), 1.37 (v1.37.2)",
    );
    assert.equal(
      minorOf(pickRelease(undefined, { KWAVE_KUBERNETES: '1.35' }, dir)),
      "KWAVE_KUBERNETES 1.35: kwave's control plane builds 1.33 (v1.33.13), 1.37 (v1.37.2)",
    );
    assert.equal(
      minorOf(pickRelease('latest', {}, dir)),
      '--kubernetes: expected a Kubernetes minor such as 1.33, found "latest"',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
