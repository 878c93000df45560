// `kwave sim` as a user runs it: the built CLI in its own process.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { BIN, CHILD_LIMITS } from './helpers/kwaveBin.js';
import { embeddedOnly } from './helpers/backend.js';

interface Running {
  child: ChildProcess;
  lines: string[];
  stderr: string[];
  exit: Promise<number | null>;
}

function startCli(args: string[]): Running {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...CHILD_LIMITS });
  const lines: string[] = [];
  const stderr: string[] = [];
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines, stderr, exit };
}

async function waitForLine(r: Running, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const line of r.lines) {
      const m = pattern.exec(line);
      if (m) return m;
    }
    if (r.child.exitCode !== null) throw new Error(`kwave sim exited ${r.child.exitCode}: ${r.stderr.join('')}`);
    if (Date.now() > deadline)
      throw new Error(`no line matching ${pattern}; got ${JSON.stringify(r.lines)} ${r.stderr.join('')}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
}

/** An HTTPS GET as a client with the kubeconfig's CA and token. */
function kubeGet(server: string, path: string, ca: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, server),
      { ca, headers: token ? { Authorization: `Bearer ${token}` } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('kwave sim', { skip: embeddedOnly('checks `kwave sim` with its default --control-plane embedded') }, () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kwave-sim-cli-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('serves the API, metrics and stats, and exits 0 on SIGTERM', async () => {
    const kubeconfigPath = join(dir, 'kubeconfig');
    const sim = startCli([
      'sim',
      '--pods',
      '5',
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--kubeconfig-out',
      kubeconfigPath,
      '--time-scale',
      '0.1',
    ]);
    try {
      const [, url] = await waitForLine(sim, /^listening on (https:\/\/127\.0\.0\.1:\d+)$/);
      const [, metricsUrl] = await waitForLine(sim, /^metrics on (http:\/\/127\.0\.0\.1:\d+)$/);
      await waitForLine(
        sim,
        new RegExp(`^kubeconfig written to ${kubeconfigPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
      );

      // The kubeconfig is a real one: its CA verifies the server, its token is accepted.
      const kc = parse(await readFile(kubeconfigPath, 'utf8')) as {
        clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
        users: { user: { token: string } }[];
      };
      assert.equal(kc.clusters[0]!.cluster.server, url);
      const ca = Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8');
      const token = kc.users[0]!.user.token;
      const pods = await kubeGet(url!, '/api/v1/namespaces/default/pods', ca, token);
      assert.equal(pods.status, 200);
      const list = JSON.parse(pods.body) as { items: { metadata: { name: string }; status: { phase: string } }[] };
      assert.deepEqual(
        list.items.map((p) => p.metadata.name),
        ['demo-0', 'demo-1', 'demo-2', 'demo-3', 'demo-4'],
      );
      assert.ok(list.items.every((p) => p.status.phase === 'Running'));
      // Without a token: system:anonymous, forbidden (as kube-apiserver); a wrong token: 401.
      assert.equal((await kubeGet(url!, '/api/v1/namespaces/default/pods', ca)).status, 403);
      assert.equal((await kubeGet(url!, '/api/v1/namespaces/default/pods', ca, 'not-the-token')).status, 401);

      const stats = await json(`${metricsUrl}/sim/stats`);
      assert.equal(stats.status, 200);
      const snapshot = stats.body as {
        requests: Record<string, number>;
        maxNotReady: Record<string, number>;
        notReady: Record<string, number>;
      };
      assert.equal(snapshot.requests['list pods'], 1);
      assert.deepEqual(snapshot.notReady, { default: 0 });

      const metrics = await fetch(`${metricsUrl}/metrics`);
      assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(
        await metrics.text(),
        /^sim_http_requests_total\{namespace="default",pod="demo-4",app="demo",code="200"\} \d+$/m,
      );

      // Admin endpoints: faults at run time, a node going NotReady, a pod deleted.
      const faults = await json(`${metricsUrl}/sim/faults`, { method: 'POST', body: JSON.stringify({ latencyMs: 1 }) });
      assert.equal((faults.body as { latencyMs: number }).latencyMs, 1);
      assert.equal((await json(`${metricsUrl}/sim/faults`, { method: 'POST', body: '{"nope":1}' })).status, 400);
      assert.equal((await json(`${metricsUrl}/sim/nodes/sim-node-1/not-ready`, { method: 'POST' })).status, 200);
      // The simulated kubelet has no process to restart: --kubelet real's endpoint is refused here.
      assert.equal((await json(`${metricsUrl}/sim/nodes/sim-node-1/restart-kubelet`, { method: 'POST' })).status, 409);
      assert.equal((await json(`${metricsUrl}/sim/pods/default/demo-1/delete`, { method: 'POST' })).status, 202);
      assert.equal((await json(`${metricsUrl}/sim/pods/default/nope/delete`, { method: 'POST' })).status, 404);
      let notReady = 0;
      for (let i = 0; i < 100 && notReady < 2; i++) {
        await new Promise((r) => setTimeout(r, 50));
        notReady =
          ((await json(`${metricsUrl}/sim/stats`)).body as { notReady: Record<string, number> }).notReady.default ?? 0;
      }
      assert.equal(notReady, 2, 'demo-0 and demo-3 run on sim-node-1');
      const reset = await json(`${metricsUrl}/sim/stats/reset`, { method: 'POST' });
      assert.deepEqual((reset.body as { requests: object }).requests, {});
    } finally {
      sim.child.kill('SIGTERM');
    }
    assert.equal(await sim.exit, 0);
    assert.ok(sim.lines.includes('SIGTERM: stopped'));
  });

  test('--clusters 3 serves three clusters, each its own API server, token, pods and /sim/stats, behind one kubeconfig', async () => {
    const kubeconfigPath = join(dir, 'multi.kubeconfig');
    const sim = startCli([
      'sim',
      '--clusters',
      '3',
      '--pods',
      '2',
      '--kubeconfig-out',
      kubeconfigPath,
      '--time-scale',
      '0.1',
    ]);
    try {
      const urls: string[] = [];
      const metricsUrls: string[] = [];
      for (const name of ['sim-1', 'sim-2', 'sim-3']) {
        urls.push((await waitForLine(sim, new RegExp(`^${name}: listening on (https://127\\.0\\.0\\.1:\\d+)$`)))[1]!);
        metricsUrls.push(
          (await waitForLine(sim, new RegExp(`^${name}: metrics on (http://127\\.0\\.0\\.1:\\d+)$`)))[1]!,
        );
      }
      await waitForLine(sim, /^kubeconfig written to .* \(contexts sim-1, sim-2, sim-3\)$/);
      assert.equal(new Set(urls).size, 3, 'three API servers');
      assert.equal(new Set(metricsUrls).size, 3, 'three admin ports');

      const kc = parse(await readFile(kubeconfigPath, 'utf8')) as {
        clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
        users: { name: string; user: { token: string } }[];
        contexts: { name: string; context: { cluster: string; user: string } }[];
        'current-context': string;
      };
      assert.deepEqual(
        kc.contexts.map((c) => c.name),
        ['sim-1', 'sim-2', 'sim-3'],
      );
      assert.equal(kc['current-context'], 'sim-1');
      const access = kc.contexts.map((c) => {
        const cluster = kc.clusters.find((x) => x.name === c.context.cluster)!.cluster;
        return {
          server: cluster.server,
          ca: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8'),
          token: kc.users.find((u) => u.name === c.context.user)!.user.token,
        };
      });
      assert.deepEqual(
        access.map((a) => a.server),
        urls,
      );
      // Separate clusters: a token of one is refused by another.
      assert.equal(
        (await kubeGet(access[1]!.server, '/api/v1/namespaces/default/pods', access[1]!.ca, access[0]!.token)).status,
        401,
      );

      // A write in sim-2 shows in sim-2's /sim/stats only.
      for (const m of metricsUrls) await json(`${m}/sim/stats/reset`, { method: 'POST' });
      const listed = await kubeGet(
        access[1]!.server,
        '/api/v1/namespaces/default/pods',
        access[1]!.ca,
        access[1]!.token,
      );
      assert.equal(listed.status, 200);
      assert.deepEqual(
        (JSON.parse(listed.body) as { items: { metadata: { name: string } }[] }).items.map((p) => p.metadata.name),
        ['demo-0', 'demo-1'],
      );
      const counts = await Promise.all(
        metricsUrls.map(
          async (m) =>
            ((await json(`${m}/sim/stats`)).body as { requests: Record<string, number> }).requests['list pods'] ?? 0,
        ),
      );
      assert.deepEqual(counts, [0, 1, 0]);
      // Admin endpoints are per cluster too: a node of sim-3 goes NotReady, sim-1's stays Ready.
      assert.equal((await json(`${metricsUrls[2]}/sim/nodes/sim-node-1/not-ready`, { method: 'POST' })).status, 200);
      let notReady = 0;
      for (let i = 0; i < 200 && notReady < 1; i++) {
        await new Promise((r) => setTimeout(r, 50));
        notReady =
          ((await json(`${metricsUrls[2]}/sim/stats`)).body as { notReady: Record<string, number> }).notReady.default ??
          0;
      }
      assert.equal(notReady, 1, 'demo-0 runs on sim-node-1 of sim-3');
      assert.deepEqual(
        ((await json(`${metricsUrls[0]}/sim/stats`)).body as { notReady: Record<string, number> }).notReady,
        { default: 0 },
      );
    } finally {
      sim.child.kill('SIGTERM');
    }
    assert.equal(await sim.exit, 0);
  });

  test('--clusters with the real control plane is refused with exit 2', async () => {
    const sim = startCli(['sim', '--clusters', '2', '--control-plane', 'real']);
    assert.equal(await sim.exit, 2);
    assert.match(sim.stderr.join(''), /--clusters: the real control plane serves one cluster per process/);
  });

  test('--kubelet real on the embedded backend is refused with exit 2', async () => {
    const sim = startCli(['sim', '--kubelet', 'real']);
    assert.equal(await sim.exit, 2);
    assert.match(
      sim.stderr.join(''),
      /--kubelet real: real kubelets join a real control plane; add --control-plane real/,
    );
  });

  test('--kubernetes on the embedded backend, or naming a release kwave does not build, is refused with exit 2', async () => {
    const embedded = startCli(['sim', '--kubernetes', '1.33']);
    assert.equal(await embedded.exit, 2);
    assert.match(
      embedded.stderr.join(''),
      /--kubernetes: picks the release of the real control plane; add --control-plane real/,
    );
    const unknown = startCli(['sim', '--control-plane', 'real', '--kubernetes', '1.20']);
    assert.equal(await unknown.exit, 2);
    assert.match(
      unknown.stderr.join(''),
      /--kubernetes 1\.20: kwave's control plane builds 1\.33 \(v1\.33\.\d+\), 1\.37 \(v1\.37\.\d+\)/,
    );
  });

  test('a bad fixture exits 2 naming file, line and column', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'nodes:\n  - name: n1\n    zoen: a\n');
    const sim = startCli(['sim', '--fixture', file]);
    assert.equal(await sim.exit, 2);
    assert.match(
      sim.stderr.join(''),
      new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:5 .*unknown field "zoen"`),
    );
  });
});
