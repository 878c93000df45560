// The metrics server: endpoints, port 0, the linger on close, a busy port; on loopback it cannot be
// reached from the machine's other addresses, on 0.0.0.0 (kwave's default in a pod) it can.
import { describe, test } from 'node:test';
import { networkInterfaces } from 'node:os';
import assert from 'node:assert/strict';
import { KwaveMetrics } from '../../../src/metrics/registry.js';
import { startMetricsServer } from '../../../src/metrics/server.js';
import { KwaveError } from '../../../src/errors.js';

const metrics = () => new KwaveMetrics({ plan: 'p', processMetrics: false });

describe('metrics server', () => {
  test('serves /metrics and /healthz on the port the OS picked; 404 elsewhere', async () => {
    const server = await startMetricsServer(metrics(), { host: '127.0.0.1', port: 0 });
    try {
      assert.ok(server.port > 0);
      assert.equal(server.url, `http://127.0.0.1:${server.port}/metrics`);
      const res = await fetch(server.url);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(await res.text(), /kwave_rollout_phase\{plan="p",phase="Pending"\} 1/);
      assert.equal(server.scrapes, 1);
      const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
      assert.equal(await health.text(), 'ok\n');
      const other = await fetch(`http://127.0.0.1:${server.port}/nope`);
      assert.equal(other.status, 404);
      await other.text();
      const post = await fetch(server.url, { method: 'POST' });
      assert.equal(post.status, 405);
      await post.text();
    } finally {
      await server.close({ lingerMs: 0 });
    }
  });

  test('close() lingers until a scrape after it has been served, and that scrape has the final state', async () => {
    const m = metrics();
    const server = await startMetricsServer(m, { host: '127.0.0.1', port: 0 });
    m.setPhase('Progressing');
    await (await fetch(server.url)).text(); // an earlier scrape does not count
    m.setPhase('Completed');
    let closed = false;
    const closing = server.close({ lingerMs: 60_000 }).then((r) => ((closed = true), r));
    await new Promise((r) => setImmediate(r));
    assert.equal(closed, false, 'still serving: no scrape since close()');
    const text = await (await fetch(server.url)).text();
    assert.match(text, /phase="Completed"\} 1/);
    const result = await closing;
    assert.equal(result.finalScrape, true);
    assert.equal(closed, true);
    await assert.rejects(fetch(server.url), 'the server is down');
  });

  test('close() gives up after lingerMs without a scrape', async () => {
    const server = await startMetricsServer(metrics(), { host: '127.0.0.1', port: 0 });
    const result = await server.close({ lingerMs: 30 });
    assert.equal(result.finalScrape, false);
  });

  test('close() ends at once when its signal fires (a second Ctrl-C)', async () => {
    const server = await startMetricsServer(metrics(), { host: '127.0.0.1', port: 0 });
    const ac = new AbortController();
    const closing = server.close({ lingerMs: 60_000, signal: ac.signal });
    ac.abort();
    assert.equal((await closing).finalScrape, false);
  });

  test('a busy port is a USAGE error that suggests a way out', async () => {
    const first = await startMetricsServer(metrics(), { host: '127.0.0.1', port: 0 });
    try {
      await assert.rejects(startMetricsServer(metrics(), { host: '127.0.0.1', port: first.port }), (err: unknown) => {
        assert.ok(err instanceof KwaveError);
        assert.equal(err.code, 'USAGE');
        assert.equal(
          err.message,
          `metrics address 127.0.0.1:${first.port} is in use; pass --metrics-address HOST:PORT (port 0 picks a free one) or off`,
        );
        return true;
      });
    } finally {
      await first.close({ lingerMs: 0 });
    }
  });
  /** An IPv4 address of this machine other than loopback, as a pod's IP is to a scraper. */
  const outside = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  test(
    "bound to 127.0.0.1 it serves loopback only; bound to 0.0.0.0 it serves the machine's other addresses too",
    { skip: outside ? false : 'this machine has no IPv4 address besides loopback' },
    async () => {
      const loopback = await startMetricsServer(metrics(), { host: '127.0.0.1', port: 0 });
      const every = await startMetricsServer(metrics(), { host: '0.0.0.0', port: 0 });
      try {
        assert.equal((await fetch(loopback.url)).status, 200);
        await assert.rejects(
          fetch(`http://${outside}:${loopback.port}/metrics`),
          'loopback is not reachable from outside',
        );
        const viaPodIp = await fetch(`http://${outside}:${every.port}/metrics`);
        assert.equal(viaPodIp.status, 200);
        assert.match(await viaPodIp.text(), /kwave_rollout_phase/);
        assert.equal((await fetch(`http://127.0.0.1:${every.port}/healthz`)).status, 200);
      } finally {
        await loopback.close({ lingerMs: 0 });
        await every.close({ lingerMs: 0 });
      }
    },
  );
});
