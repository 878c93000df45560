// `kwave dashboard` without a browser: the view it pushes by server-sent events keeps following
// the rollout record through broken watches (embedded: every watch stream cut each second;
// real: etcd compacted and the apiserver restarted, so resumed watches meet 410 Gone and list
// again), and who may use it (a loopback server refuses a foreign Host; beyond loopback the
// printed token is required; actions need the page's CSRF token).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { embeddedOnly } from './helpers/backend.js';
import { startDashboard } from './helpers/dashboard.js';
import { exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';
import { clusterReader, type ClusterReader } from './helpers/clusterRead.js';
import { compactEtcd } from '../chaos/realCluster.js';
import type { DashboardView, RolloutView } from '../../src/dashboard/viewModel.js';

/** Resolves with the first view pushed on /api/stream whose rollout `web` satisfies `match`. */
async function pushedView(
  url: string,
  match: (r: RolloutView) => boolean,
  what: string,
  waitMs = 120_000,
): Promise<RolloutView> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), waitMs);
  let last: RolloutView | undefined;
  try {
    const res = await fetch(`${url}api/stream`, { signal: stop.signal });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: (.*)$/m.exec(message)?.[1];
        const rollout = data && (JSON.parse(data) as DashboardView).rollouts.find((r) => r.plan === 'web');
        if (rollout) last = rollout;
        if (rollout && match(rollout)) return rollout;
      }
    }
  } catch (err) {
    if (stop.signal.aborted) {
      const seen = last ? `phase ${last.phase}, waves ${JSON.stringify(last.waveBars)}` : 'no view of web';
      throw new Error(`no view pushed with ${what} in ${waitMs / 1000} s; the last: ${seen}`);
    }
    throw err;
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
  throw new Error(`the stream ended before ${what}`);
}

/**
 * Resolves once every node has read Ready for `steadyMs` on end. After an apiserver restart the
 * node lifecycle controller may mark every node NotReady (their heartbeats went unseen past its
 * grace); kwave waits for them only `strategy.nodeGraceSeconds`, then ends Partial, and on a
 * loaded machine they may take longer: this suite is about the dashboard, not about nodes.
 */
async function nodesSteadyReady(reader: ClusterReader, steadyMs = 10_000, waitMs = 120_000): Promise<void> {
  const ready = async () =>
    (await reader.nodes()).every((n) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
  const end = Date.now() + waitMs;
  let since: number | undefined;
  while (Date.now() < end) {
    const now = Date.now();
    since = (await ready().catch(() => false)) ? (since ?? now) : undefined;
    if (since !== undefined && now - since >= steadyMs) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`the nodes were not Ready for ${steadyMs / 1000} s on end within ${waitMs / 1000} s`);
}

describe('kwave dashboard: live through broken watches, and its access rules', () => {
  test('the pushed view follows the record across watch cuts (embedded) or 410s and an apiserver restart (real)', async () => {
    const fleet = await startFleet({ pods: 6 });
    try {
      const plan = await fleet.writePlan(
        'web.yaml',
        planYaml({
          name: 'web',
          waves: '[1, "100%"]',
          concurrency: 2,
          gates: [{ name: 'sign-off', afterWaves: [1], approval: true }],
        }),
      );
      const dashboard = await startDashboard(fleet.kubeconfig);
      const run = fleet.start(['run', plan]);
      const waiting = await pushedView(dashboard.url, (r) => r.approval?.wave === 1, 'the approval wait');
      assert.deepEqual(waiting.actions.includes('approve'), true);

      if (fleet.sim.embedded) fleet.sim.embedded.faults.watchCutSeconds = 1;
      else {
        const cp = fleet.sim.real!.controlPlane;
        await compactEtcd(cp.etcdUrl);
        await cp.restartApiServer();
        await nodesSteadyReady(clusterReader(fleet.kubeconfig));
      }
      const approved = await fleet.kwave(['approve', plan]);
      assert.equal(approved.code, 0, approved.stderr);
      const done = await pushedView(dashboard.url, (r) => r.phase === 'Completed', 'phase Completed').catch(
        (err: Error) => {
          const tail = (text: string) => text.slice(-3000);
          throw new Error(
            `${err.message}\nkwave run stdout:\n${tail(run.stdout())}\nstderr:\n${tail(run.stderr())}\nkwave dashboard stderr:\n${tail(dashboard.stderr())}`,
          );
        },
      );
      assert.deepEqual(
        done.waveBars.map((b) => [b.atTarget, b.pods, b.state]),
        [
          [1, 1, 'done'],
          [5, 5, 'done'],
        ],
      );
      assert.equal(done.approvals[0]?.wave, 1);
      assert.equal((await exitOf(run)).code, 0, run.stderr());
      if (fleet.sim.embedded) fleet.sim.embedded.faults.watchCutSeconds = 0;
      assert.equal(await dashboard.stop(), 0, dashboard.stderr());
    } finally {
      await fleet.close();
    }
  });

  test(
    'loopback: a foreign Host is refused; beyond loopback: the risk is said, the token required, then kept in a cookie; actions need the CSRF token',
    { skip: embeddedOnly('HTTP access rules of the dashboard alone: the backend changes nothing') },
    async () => {
      const fleet = await startFleet({ pods: 2 });
      try {
        const local = await startDashboard(fleet.kubeconfig);
        const port = new URL(local.url).port;
        const { request } = await import('node:http');
        const status = await new Promise<number>((resolve, reject) =>
          request({ host: '127.0.0.1', port, path: '/', headers: { host: `rebound.example:${port}` } }, (res) =>
            resolve(res.statusCode ?? 0),
          )
            .on('error', reject)
            .end(),
        );
        assert.equal(status, 403);
        assert.equal((await fetch(local.url)).status, 200);
        const noCsrf = await fetch(`${local.url}api/actions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: 'default/web', action: 'pause' }),
        });
        assert.equal(noCsrf.status, 403);
        assert.match(((await noCsrf.json()) as { message: string }).message, /CSRF/);
        await local.stop();

        const open = await startDashboard(fleet.kubeconfig, ['--address', '0.0.0.0:0']);
        const withToken = new URL(open.url);
        const token = withToken.searchParams.get('token')!;
        assert.ok(token.length >= 32);
        const bare = `http://127.0.0.1:${withToken.port}/`;
        assert.equal((await fetch(bare)).status, 401);
        assert.equal((await fetch(`${bare}api/view`)).status, 401);
        const first = await fetch(`${bare}?token=${token}`, { redirect: 'manual' });
        assert.equal(first.status, 303);
        const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
        const page = await fetch(bare, { headers: { cookie } });
        assert.equal(page.status, 200);
        assert.match(await page.text(), /<meta name="kwave-csrf" content="[\w-]{32}"/);
        assert.equal((await fetch(`${bare}api/view`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
        assert.equal(await open.stop(), 0, open.stderr());
        assert.match(open.stderr(), /WARNING: listening on 0\.0\.0\.0:\d+, beyond this machine/);
      } finally {
        await fleet.close();
      }
    },
  );
});
