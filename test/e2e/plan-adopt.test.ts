// `kwave plan` and `kwave adopt` as a user runs them: the built CLI in its own process against
// the simulated cluster (started in this process).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestSim, type TestSim } from './helpers/backend.js';
import { BIN, CHILD_LIMITS } from './helpers/kwaveBin.js';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI without blocking this process's event loop (the simulator lives in it). */
function kwave(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { ...CHILD_LIMITS, env: { ...process.env, KUBECONFIG: '' } },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(err);
        resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
      },
    );
  });
}

const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
workloads:
  - namespace: default
    name: demo
    replicas: 60
    labels: { app: demo }
    containers:
      - { name: nginx, image: "nginx:1.14.2" }
  - namespace: apps
    name: legacy
    replicas: 3
    labels: { app: legacy }
    containers:
      - { name: nginx, image: "nginx:1.14.2" }
    readinessGate: { condition: absent }
  - namespace: apps
    name: ready
    replicas: 2
    labels: { app: legacy }
    containers:
      - { name: nginx, image: "nginx:1.14.2" }
  - namespace: apps
    name: nogate
    replicas: 2
    labels: { app: legacy }
    containers:
      - { name: nginx, image: "nginx:1.14.2" }
    readinessGate: false
`;

type Stats = { requests: Record<string, number> };

describe('kwave plan and kwave adopt against the simulator', () => {
  let dir = '';
  let sim: TestSim;
  let kubeconfig = '';

  const stats = async (): Promise<Stats> => (await fetch(`${sim.metricsUrl}/sim/stats`)).json() as Promise<Stats>;
  const resetStats = async () => {
    await fetch(`${sim.metricsUrl}/sim/stats/reset`, { method: 'POST' });
  };
  const writes = (s: Stats) =>
    Object.entries(s.requests).filter(([k, n]) => n > 0 && /^(create|update|patch|delete) /.test(k));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kwave-plan-adopt-'));
    const fixture = join(dir, 'fixture.yaml');
    await writeFile(fixture, FIXTURE);
    kubeconfig = join(dir, 'kubeconfig');
    sim = await startTestSim({ fixture, kubeconfigOut: kubeconfig, timeScale: 0.2 });
  });
  after(async () => {
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('plan prints the demo waves (1, 5, 24, 30 of 60 pods), exits 0 and writes nothing', async () => {
    await resetStats();
    const r = await kwave(['plan', 'plans/demo.yaml', '--kubeconfig', kubeconfig]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /selected 60 pods: 60 to upgrade in 4 waves, 0 already at target/);
    assert.match(
      r.stdout,
      /wave 1\/4: 1 pod, then 1 of 60 at target\n {2}default\/demo-\d+\s+sim-node-\d\s+zone-[abc]\n {2}then gate canary-soak \(pause 3s\)/,
    );
    assert.match(r.stdout, /wave 2\/4: 5 pods, then 6 of 60 at target/);
    assert.match(r.stdout, /wave 3\/4: 24 pods, then 30 of 60 at target/);
    assert.match(r.stdout, /wave 4\/4: 30 pods, then 60 of 60 at target/);
    assert.match(r.stdout, /… 14 more \(--all lists every pod\)/);
    assert.match(r.stdout, /at most 5 pods unavailable at once, 5 in flight/);
    assert.match(r.stdout, /OK: kwave run would upgrade 60 pods in 4 waves/);

    const all = await kwave(['plan', 'plans/demo.yaml', '--kubeconfig', kubeconfig, '--all']);
    assert.equal(all.code, 0);
    assert.equal((all.stdout.match(/^ {2}default\/demo-\d+ /gm) ?? []).length, 60);

    const s = await stats();
    assert.deepEqual(writes(s), [], JSON.stringify(s.requests));
    assert.ok((s.requests['list pods'] ?? 0) >= 2, JSON.stringify(s.requests));
  });

  test('plan -o json is one object with the same waves, each pod with node and zone', async () => {
    const r = await kwave(['plan', 'plans/demo.yaml', '--kubeconfig', kubeconfig, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 1);
    const report = JSON.parse(lines[0]!) as {
      plan: string;
      refused: boolean;
      budget: number;
      maxFailed: number;
      waves: {
        wave: number;
        target: number;
        pods: { namespace: string; name: string; node?: string; zone?: string }[];
      }[];
    };
    assert.equal(report.plan, 'demo');
    assert.equal(report.refused, false);
    assert.equal(report.budget, 5);
    assert.equal(report.maxFailed, 0);
    assert.deepEqual(
      report.waves.map((w) => w.pods.length),
      [1, 5, 24, 30],
    );
    assert.deepEqual(
      report.waves.map((w) => w.target),
      [1, 6, 30, 60],
    );
    const pods = report.waves.flatMap((w) => w.pods);
    assert.equal(new Set(pods.map((p) => p.name)).size, 60);
    for (const p of pods) {
      assert.match(p.node ?? '', /^sim-node-\d$/);
      assert.match(p.zone ?? '', /^zone-[abc]$/);
    }
  });

  test('a plan naming a container the pods do not have is refused: exit 2, naming it', async () => {
    const text = (await readFile('plans/demo.yaml', 'utf8')).replace('- name: nginx', '- name: app');
    const file = join(dir, 'wrong-container.yaml');
    await writeFile(file, text);
    await resetStats();
    const r = await kwave(['plan', file, '--kubeconfig', kubeconfig]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /error {4}default\/demo-\d+ has no container named app/);
    assert.match(r.stdout, /… 55 more container-missing problems/);
    assert.match(r.stdout, /REFUSED: kwave run would refuse this plan \(60 errors above\)/);
    assert.deepEqual(writes(await stats()), []);
  });

  test('an invalid plan exits 2 with the place of the error, before touching the cluster', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, (await readFile('plans/demo.yaml', 'utf8')).replace('concurrency: 5', 'concurrency: -1'));
    await resetStats();
    const r = await kwave(['plan', file, '--kubeconfig', kubeconfig]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      new RegExp(
        `${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+ PLAN_INVALID_VALUE spec\\.strategy\\.concurrency`,
      ),
    );
    assert.deepEqual((await stats()).requests, {});
  });

  test('adopt --dry-run lists the pods to adopt and writes nothing; adopt makes them Ready', async () => {
    const legacy = ['legacy-0', 'legacy-1', 'legacy-2'];
    const ready = (name: string) =>
      (
        sim.getPod('apps', name) as
          { status?: { conditions?: { type: string; status: string; reason?: string }[] } } | undefined
      )?.status?.conditions ?? [];
    for (const name of legacy)
      assert.equal(ready(name).find((c) => c.type === 'Ready')?.status, 'False', `${name} starts not Ready`);

    await resetStats();
    const dry = await kwave(['adopt', '-n', 'apps', '-l', 'app=legacy', '--dry-run', '--kubeconfig', kubeconfig]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /7 pods in namespace apps match app=legacy/);
    assert.match(dry.stdout, /would adopt 3 pods .*\n {2}legacy-0\n {2}legacy-1\n {2}legacy-2\n/);
    assert.match(dry.stdout, /already have the condition: 2 pods \(2 True\)/);
    assert.match(
      dry.stdout,
      /cannot adopt 2 pods: no kwave\.dev\/in-place-ready in spec\.readinessGates.*\n {2}nogate-0\n {2}nogate-1/,
    );
    assert.deepEqual(writes(await stats()), []);

    const r = await kwave(['adopt', '-n', 'apps', '-l', 'app=legacy', '--kubeconfig', kubeconfig, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { adopted: string[]; notDeclared: string[]; failed: unknown[] };
    assert.deepEqual(out.adopted, legacy);
    assert.deepEqual(out.notDeclared, ['nogate-0', 'nogate-1']);
    assert.deepEqual(out.failed, []);
    assert.equal((await stats()).requests['patch pods/status'], 3);

    // The kubelet computes Ready once the gate's condition is True.
    const deadline = Date.now() + 10_000;
    for (const name of legacy) {
      while (ready(name).find((c) => c.type === 'Ready')?.status !== 'True') {
        assert.ok(Date.now() < deadline, `${name} did not become Ready: ${JSON.stringify(ready(name))}`);
        await new Promise((res) => setTimeout(res, 50));
      }
      assert.equal(ready(name).find((c) => c.type === 'kwave.dev/in-place-ready')?.reason, 'KwaveAdopted');
    }

    // A second adopt has nothing left to do.
    const again = await kwave(['adopt', '-n', 'apps', '-l', 'app=legacy', '--kubeconfig', kubeconfig]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /nothing to adopt/);
  });
});
