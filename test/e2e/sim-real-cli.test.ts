// `kwave sim --control-plane real --kubernetes V` as a user runs it (the built CLI in its own
// process, the cached control-plane build of that release): 20 Running pods on the agent's nodes
// through the real kubectl, that release's server version, RBAC answering `auth can-i`, then
// `kwave run plans/demo.yaml` to the end: every pod's imageID changed, restartCount 1, uid
// unchanged, and /sim/stats — read from the apiserver's audit log, kwave's user only — 3 pod
// writes per pod. Runs on the real pass.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { BACKEND, realNotBuilt } from './helpers/backend.js';
import { selectedRelease } from './helpers/controlPlane.js';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'bin/kwave.js');
const skip =
  BACKEND !== 'real'
    ? 'the real backend only (KWAVE_TEST_BACKEND=real); sim-cli.test.ts runs the embedded `kwave sim`'
    : realNotBuilt;

describe('kwave sim --control-plane real', { skip }, () => {
  let child: ChildProcess;
  let dir: string;
  let kubeconfig: string;
  let metricsUrl: string;
  const out: string[] = [];
  const kubectl = async (...args: string[]) =>
    (
      await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
        timeout: 60_000,
        encoding: 'utf8',
      })
    ).stdout;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kwave-sim-real-'));
    kubeconfig = join(dir, 'kc');
    child = spawn(
      process.execPath,
      [
        BIN,
        'sim',
        '--control-plane',
        'real',
        '--kubernetes',
        selectedRelease().minor,
        '--pods',
        '20',
        '--kubeconfig-out',
        kubeconfig,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.setEncoding('utf8').on('data', (c: string) => out.push(c));
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
    const deadline = Date.now() + 300_000;
    while (!/real control plane v\d+\.\d+\.\d+ up in/.test(out.join(''))) {
      if (child.exitCode !== null) throw new Error(`kwave sim exited ${child.exitCode}: ${err}`);
      if (Date.now() > deadline) throw new Error(`kwave sim did not come up: ${out.join('')} ${err}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    metricsUrl = /metrics on (http:\/\/\S+)/.exec(out.join(''))![1]!;
  });
  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('prints the same lines as the embedded backend, and a real server answers kubectl', async () => {
    const text = out.join('');
    assert.match(text, /^listening on https:\/\/127\.0\.0\.1:\d+$/m);
    assert.match(text, /^metrics on http:\/\/127\.0\.0\.1:\d+$/m);
    assert.match(text, /^20 pods on 3 nodes;/m);
    const pods = (await kubectl('get', 'pods', '-o', 'wide', '--no-headers')).trim().split('\n');
    assert.equal(pods.length, 20);
    for (const line of pods)
      assert.match(line, /^demo-\d+\s+1\/1\s+Running\s+0\s+\S+\s+10\.\d+\.\d+\.\d+\s+sim-node-[123]\s+<none>\s+1\/1$/);
    const version = JSON.parse(await kubectl('version', '-o', 'json')) as { serverVersion: { gitVersion: string } };
    assert.equal(version.serverVersion.gitVersion, selectedRelease().version);
    assert.equal((await kubectl('auth', 'can-i', 'patch', 'pods', '--subresource=status')).trim(), 'yes');
    const zones = (await kubectl('get', 'nodes', '-L', 'topology.kubernetes.io/zone', '--no-headers'))
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/).pop());
    assert.deepEqual(zones, ['zone-a', 'zone-b', 'zone-c']);
  });

  test('kwave run plans/demo.yaml: imageID changed, restartCount 1, uid unchanged, 3 writes per pod by kwave', async () => {
    const before = (JSON.parse(await kubectl('get', 'pods', '-o', 'json')) as { items: V1Pod[] }).items;
    await fetch(`${metricsUrl}/sim/stats/reset`, { method: 'POST' });
    const r = await run(
      process.execPath,
      [BIN, 'run', 'plans/demo.yaml', '--kubeconfig', kubeconfig, '--metrics-address', 'off'],
      { timeout: 240_000, encoding: 'utf8' },
    );
    assert.match(r.stdout, /demo Completed in .*: completed: 20 pods upgraded/);
    const now = new Map(
      (JSON.parse(await kubectl('get', 'pods', '-o', 'json')) as { items: V1Pod[] }).items.map((p) => [
        p.metadata!.name!,
        p,
      ]),
    );
    for (const p of before) {
      const after = now.get(p.metadata!.name!)!;
      const [b, a] = [p.status!.containerStatuses![0]!, after.status!.containerStatuses![0]!];
      assert.equal(after.metadata!.uid, p.metadata!.uid, `${p.metadata!.name}: same pod`);
      assert.notEqual(a.imageID, b.imageID, `${p.metadata!.name}: imageID changed`);
      assert.equal(a.restartCount, 1);
      assert.equal(a.image, 'docker.io/library/nginx:1.25.3');
    }
    const stats = (await (await fetch(`${metricsUrl}/sim/stats`)).json()) as {
      requests: Record<string, number>;
      maxNotReady: Record<string, number>;
    };
    assert.equal(stats.requests['patch pods'], 20, JSON.stringify(stats.requests));
    assert.equal(stats.requests['patch pods/status'], 40, JSON.stringify(stats.requests));
    assert.ok((stats.maxNotReady.default ?? 0) <= 5, `maxUnavailable held: ${JSON.stringify(stats.maxNotReady)}`);
  });

  test('/sim/stats counts a refused request under `refused` too, by its answer in the audit log', async () => {
    const first = (await kubectl('get', 'pods', '-o', 'name')).split('\n')[0]!.replace('pod/', '');
    await fetch(`${metricsUrl}/sim/stats/reset`, { method: 'POST' });
    await assert.rejects(kubectl('get', 'pod', 'no-such-pod'), /NotFound/);
    await kubectl('get', 'pod', first, '-o', 'name');
    // The audit line of a request is written as it completes: a bound, not a sleep.
    const read = async () =>
      (await (await fetch(`${metricsUrl}/sim/stats`)).json()) as {
        requests: Record<string, number>;
        refused: Record<string, number>;
      };
    const deadline = Date.now() + 30_000;
    let stats = await read();
    while ((stats.requests['get pods'] ?? 0) < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      stats = await read();
    }
    assert.equal(stats.requests['get pods'], 2, JSON.stringify(stats));
    assert.equal(stats.refused['get pods'], 1, JSON.stringify(stats));
  });
});
