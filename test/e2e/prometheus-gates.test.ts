// Prometheus gates against a real Prometheus scraping a small app that reports request counters
// with an error share the test controls.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { evaluatePrometheusGate } from '../../src/gates/prometheus.js';
import { runGate } from '../../src/gates/index.js';
import type { PrometheusGate } from '../../src/plan/types.js';
import { KwaveMetrics } from '../../src/metrics/registry.js';
import { freePort, startPrometheus, waitFor, type PrometheusServer } from './helpers/prometheus.js';
import { missing } from './helpers/prerequisites.js';
import { noClusterOnReal } from './helpers/backend.js';

const skip = missing('prometheus');

/** Each scrape adds 1000 requests per app, `share` of them answered 500. */
class FakeApp {
  private readonly apps = new Map<string, { ok: number; errors: number; share: number }>();
  server?: Server;

  setShare(app: string, share: number) {
    const a = this.apps.get(app) ?? { ok: 0, errors: 0, share };
    a.share = share;
    this.apps.set(app, a);
  }

  exposition(): string {
    const lines = ['# HELP sim_http_requests_total Requests served.', '# TYPE sim_http_requests_total counter'];
    for (const [app, a] of this.apps) {
      const errors = Math.round(a.share * 1000);
      a.errors += errors;
      a.ok += 1000 - errors;
      lines.push(`sim_http_requests_total{app="${app}",code="200"} ${a.ok}`);
      lines.push(`sim_http_requests_total{app="${app}",code="500"} ${a.errors}`);
    }
    return lines.join('\n') + '\n';
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(this.exposition());
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((r) => {
      this.server?.close(() => r());
      this.server?.closeAllConnections();
    });
  }
}

const errorRate = (app: string) =>
  `sum(rate(sim_http_requests_total{app="${app}",code=~"5.."}[3s])) / sum(rate(sim_http_requests_total{app="${app}"}[3s]))`;

function gateFor(address: string, over: Partial<PrometheusGate> = {}): PrometheusGate {
  return {
    address,
    query: errorRate('good'),
    successCondition: 'result < 0.01',
    failureCondition: 'result >= 0.05',
    initialDelayMs: 0,
    intervalMs: 100,
    count: 3,
    failureLimit: 0,
    inconclusiveLimit: 0,
    consecutiveErrorLimit: 2,
    noData: 'inconclusive',
    dryRun: false,
    consecutiveSuccessLimit: 0,
    timeoutMs: 5_000,
    ...over,
  };
}

describe('Prometheus gate against a real Prometheus', { skip: noClusterOnReal }, () => {
  const app = new FakeApp();
  let prom: PrometheusServer;

  /** Resolves once Prometheus' answer to `query` is `value` (the rate window has filled). */
  const untilValue = (query: string, value: number) =>
    waitFor(`${query} == ${value}`, async () => {
      const r = await prom.query(query);
      const samples = r.result as { value: [number, string] }[];
      return samples.length === 1 && Math.abs(Number(samples[0]!.value[1]) - value) < 1e-9 ? true : undefined;
    });

  before(async () => {
    if (skip) return;
    app.setShare('good', 0);
    app.setShare('bad', 0.5);
    app.setShare('canary', 0);
    const target = await app.start();
    prom = await startPrometheus({ targets: [target] });
    await untilValue(errorRate('good'), 0);
    await untilValue(errorRate('bad'), 0.5);
    await untilValue(errorRate('canary'), 0);
  });

  after(async () => {
    if (skip) return;
    await prom?.stop();
    await app.stop();
  });

  test('a good error rate passes', { skip }, async () => {
    const seen: string[] = [];
    const out = await evaluatePrometheusGate('error-rate', gateFor(prom.url), {
      onMeasurement: (m) => seen.push(m.phase),
    });
    assert.equal(out.result, 'passed', out.message);
    assert.deepEqual(seen, ['successful', 'successful', 'successful']);
    assert.deepEqual(
      out.measurements.map((m) => m.value),
      [0, 0, 0],
    );
    assert.match(
      out.message,
      /^error-rate: 3 of 3 measurements successful; last: result 0 matched successCondition result < 0.01$/,
    );
  });

  test('a bad error rate fails at once, naming value, condition and measurement', { skip }, async () => {
    const out = await evaluatePrometheusGate('error-rate', gateFor(prom.url, { query: errorRate('bad'), count: 4 }));
    assert.equal(out.result, 'failed');
    assert.equal(out.message, 'error-rate: result 0.5 matched failureCondition result >= 0.05 at measurement 1 of 4');
    assert.equal(out.measurements.length, 1);
    assert.equal(out.measurements[0]!.phase, 'failed');
  });

  test('an error rate that turns bad mid-gate fails at that measurement', { skip }, async () => {
    // Between measurement 1 and 2 the canary starts failing 8.3% of requests; the injected
    // sleep waits until Prometheus sees it, so no timing is assumed. The gate keeps a fixed
    // schedule and skips the sleep when it is behind it: with a 100 ms interval, a first answer
    // slower than that (a loaded machine) skipped the switch and measurement 2 still read 0. The
    // injected sleep costs nothing, so the interval is a minute: never behind.
    let sleeps = 0;
    const sleep = async () => {
      if (++sleeps === 1) {
        app.setShare('canary', 0.083);
        await untilValue(errorRate('canary'), 0.083);
      }
      return true;
    };
    try {
      const out = await evaluatePrometheusGate(
        'error-rate',
        gateFor(prom.url, { query: errorRate('canary'), count: 4, intervalMs: 60_000 }),
        { sleep },
      );
      assert.equal(
        out.message,
        'error-rate: result 0.083 matched failureCondition result >= 0.05 at measurement 2 of 4',
      );
      assert.equal(out.result, 'failed');
      assert.deepEqual(
        out.measurements.map((m) => m.phase),
        ['successful', 'failed'],
      );
    } finally {
      app.setShare('canary', 0);
    }
  });

  test('a vector of several values is a list: results.all() judges each', { skip }, async () => {
    const query = `sum by (app) (rate(sim_http_requests_total{app=~"good|bad",code=~"5.."}[3s])) / sum by (app) (rate(sim_http_requests_total{app=~"good|bad"}[3s]))`;
    const out = await evaluatePrometheusGate(
      'per-app',
      gateFor(prom.url, {
        query,
        successCondition: 'results.all(x, x < 0.01)',
        failureCondition: 'results.exists(x, x >= 0.05)',
        count: 1,
      }),
    );
    assert.equal(out.result, 'failed');
    assert.deepEqual([...(out.measurements[0]!.value as number[])].sort(), [0, 0.5]);
  });

  test('an unreachable Prometheus counts as errors up to consecutiveErrorLimit, then fails', { skip }, async () => {
    const port = await freePort(); // nothing listens there
    const out = await evaluatePrometheusGate(
      'error-rate',
      gateFor(`http://127.0.0.1:${port}`, { count: 6, intervalMs: 20, consecutiveErrorLimit: 2 }),
    );
    assert.equal(out.result, 'failed');
    assert.equal(out.measurements.length, 3);
    assert.ok(out.measurements.every((m) => m.phase === 'error' && m.value === null));
    assert.match(
      out.message,
      /^error-rate: 3 measurement errors in a row \(consecutiveErrorLimit 2\), the last at measurement 3 of 6: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/query: .*ECONNREFUSED/,
    );
  });

  test('errors within consecutiveErrorLimit are tolerated when Prometheus comes back', { skip }, async () => {
    const deadPort = await freePort();
    let calls = 0;
    // The first two queries go to a dead port, the rest to the real Prometheus.
    const flaky: typeof fetch = (input, init) => {
      calls++;
      const url = new URL(String(input));
      if (calls <= 2) url.port = String(deadPort);
      return fetch(url, init);
    };
    const out = await evaluatePrometheusGate('error-rate', gateFor(prom.url, { count: 4, intervalMs: 20 }), {
      fetch: flaky,
    });
    assert.equal(out.result, 'passed', out.message);
    assert.deepEqual(
      out.measurements.map((m) => m.phase),
      ['error', 'error', 'successful', 'successful'],
    );
    assert.match(out.message, /2 of 4 measurements successful, 2 errors/);
  });

  for (const [noData, expected] of [
    ['pass', 'passed'],
    ['fail', 'failed'],
    ['inconclusive', 'inconclusive'],
  ] as const) {
    test(`an empty result follows noData: ${noData}`, { skip }, async () => {
      const out = await evaluatePrometheusGate(
        'error-rate',
        gateFor(prom.url, { query: errorRate('nonexistent'), noData, count: 2, intervalMs: 20 }),
      );
      assert.equal(out.result, expected, out.message);
      assert.equal(out.measurements[0]!.value, null);
      assert.equal(out.measurements[0]!.message, `query returned no data (noData: ${noData})`);
      if (expected !== 'passed')
        assert.equal(out.message, `error-rate: query returned no data (noData: ${noData}) at measurement 1 of 2`);
    });
  }

  test('a query Prometheus rejects is an error measurement carrying its message', { skip }, async () => {
    const out = await evaluatePrometheusGate(
      'error-rate',
      gateFor(prom.url, { query: 'sum(rate(', count: 1, consecutiveErrorLimit: 0 }),
    );
    assert.equal(out.result, 'failed');
    assert.match(out.measurements[0]!.message, /HTTP 400: bad_data: .*parse error/);
  });

  test('the bearer token from the named env var is sent; it never shows in messages', { skip }, async () => {
    const seen: (string | null)[] = [];
    const spy: typeof fetch = (input, init) => {
      seen.push(new Headers(init?.headers).get('authorization'));
      return fetch(input, init);
    };
    const gate = gateFor(prom.url, { count: 1, auth: { bearerTokenEnv: 'KWAVE_TEST_PROM_TOKEN' } });
    const out = await evaluatePrometheusGate('error-rate', gate, {
      fetch: spy,
      env: { KWAVE_TEST_PROM_TOKEN: 's3cret\n' },
    });
    assert.equal(out.result, 'passed');
    assert.deepEqual(seen, ['Bearer s3cret']);
    assert.doesNotMatch(JSON.stringify(out), /s3cret/);
  });

  test('runGate counts the outcome into kwave_gate_checks_total', { skip }, async () => {
    const metrics = new KwaveMetrics({ plan: 'web', processMetrics: false });
    metrics.declareGates(['error-rate']);
    const run = await runGate(
      {
        name: 'error-rate',
        pauseMs: 0,
        approval: false,
        prometheus: gateFor(prom.url, { query: errorRate('bad'), count: 2 }),
      },
      { plan: 'web', revision: 'abc', wave: 1, phase: 'Progressing', metrics },
    );
    assert.equal(run.result, 'failed');
    const text = await metrics.exposition();
    assert.match(text, /kwave_gate_checks_total\{plan="web",gate="error-rate",result="failed"\} 1\n/);
    assert.match(text, /kwave_gate_checks_total\{plan="web",gate="error-rate",result="passed"\} 0\n/);
  });
});
