// The Prometheus gate's shell with a fake clock and a fake fetch: schedule, tokens, timeouts, abort.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluatePrometheusGate, queryEndpoint } from '../../../src/gates/prometheus.js';
import type { PrometheusGate } from '../../../src/plan/types.js';
import type { Sleep } from '../../../src/sleep.js';

function gate(over: Partial<PrometheusGate> = {}): PrometheusGate {
  return {
    address: 'http://prom.test:9090',
    query: 'up',
    successCondition: 'result < 0.01',
    failureCondition: 'result >= 0.05',
    initialDelayMs: 0,
    intervalMs: 30_000,
    count: 4,
    failureLimit: 0,
    inconclusiveLimit: 0,
    consecutiveErrorLimit: 2,
    noData: 'inconclusive',
    dryRun: false,
    consecutiveSuccessLimit: 0,
    timeoutMs: 10_000,
    ...over,
  };
}

/** A clock that only moves when the gate sleeps. */
function fakeClock(start = 1_700_000_000_000) {
  let now = start;
  const sleeps: number[] = [];
  const sleep: Sleep = async (ms) => {
    sleeps.push(ms);
    now += ms;
    return true;
  };
  return { now: () => now, sleep, sleeps, advance: (ms: number) => (now += ms) };
}

const scalar = (v: string) =>
  new Response(JSON.stringify({ status: 'success', data: { resultType: 'scalar', result: [1, v] } }), { status: 200 });

/** Answers with the given values in turn; records each request. */
function answering(values: string[]) {
  const requests: { url: string; headers: Headers }[] = [];
  const f: typeof fetch = async (input, init) => {
    requests.push({ url: String(input), headers: new Headers(init?.headers) });
    return scalar(values[Math.min(requests.length - 1, values.length - 1)]!);
  };
  return { fetch: f, requests };
}

describe('Prometheus gate schedule', () => {
  test('initialDelay, then count measurements interval apart', async () => {
    const clock = fakeClock();
    const f = answering(['0', '0', '0', '0']);
    const out = await evaluatePrometheusGate('g', gate({ initialDelayMs: 60_000 }), { ...clock, fetch: f.fetch });
    assert.equal(out.result, 'passed');
    assert.deepEqual(clock.sleeps, [60_000, 30_000, 30_000, 30_000]);
    assert.equal(f.requests.length, 4);
    assert.deepEqual(
      out.measurements.map((m) => m.at),
      [60_000, 90_000, 120_000, 150_000].map((d) => new Date(1_700_000_000_000 + d).toISOString()),
    );
  });

  test('a slow answer does not stretch the schedule', async () => {
    const clock = fakeClock();
    const slow: typeof fetch = async () => {
      clock.advance(10_000);
      return scalar('0');
    };
    await evaluatePrometheusGate('g', gate({ count: 3 }), { ...clock, fetch: slow });
    assert.deepEqual(clock.sleeps, [20_000, 20_000]);
  });

  test('stops at the first failed measurement', async () => {
    const clock = fakeClock();
    const f = answering(['0', '0.083', '0']);
    const out = await evaluatePrometheusGate('error-rate', gate(), { ...clock, fetch: f.fetch });
    assert.equal(out.message, 'error-rate: result 0.083 matched failureCondition result >= 0.05 at measurement 2 of 4');
    assert.equal(f.requests.length, 2);
    assert.deepEqual(
      out.measurements.map((m) => [m.phase, m.value]),
      [
        ['successful', 0],
        ['failed', 0.083],
      ],
    );
  });

  test('queries /api/v1/query under the address, the PromQL URL-encoded', async () => {
    const f = answering(['0']);
    await evaluatePrometheusGate(
      'g',
      gate({ address: 'http://prom.test/prometheus', count: 1, query: 'sum(rate(x{code=~"5.."}[1m]))' }),
      { ...fakeClock(), fetch: f.fetch },
    );
    const url = new URL(f.requests[0]!.url);
    assert.equal(url.origin + url.pathname, 'http://prom.test/prometheus/api/v1/query');
    assert.equal(url.searchParams.get('query'), 'sum(rate(x{code=~"5.."}[1m]))');
    assert.equal(queryEndpoint('http://p:9090/').href, 'http://p:9090/api/v1/query');
  });

  test('onMeasurement sees each measurement as it is taken', async () => {
    const seen: string[] = [];
    await evaluatePrometheusGate('g', gate({ count: 2 }), {
      ...fakeClock(),
      fetch: answering(['0']).fetch,
      onMeasurement: (m, i, n) => seen.push(`${i}/${n} ${m.phase}`),
    });
    assert.deepEqual(seen, ['1/2 successful', '2/2 successful']);
  });
});

describe('Prometheus gate problems', () => {
  test('a bad condition fails the gate before any query', async () => {
    const f = answering(['0']);
    const out = await evaluatePrometheusGate('g', gate({ successCondition: 'result <' }), {
      ...fakeClock(),
      fetch: f.fetch,
    });
    assert.equal(out.result, 'failed');
    assert.match(out.message, /^g: successCondition "result <": /);
    assert.equal(f.requests.length, 0);
  });

  test('an address that is not a URL fails the gate', async () => {
    const out = await evaluatePrometheusGate('g', gate({ address: 'prom:9090 x' }), {
      ...fakeClock(),
      fetch: answering(['0']).fetch,
    });
    assert.equal(out.result, 'failed');
    assert.match(out.message, /is not a URL/);
  });

  test('no answer within timeoutMs is an error measurement', async () => {
    const hang: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
    const out = await evaluatePrometheusGate('g', gate({ timeoutMs: 20, count: 1, consecutiveErrorLimit: 0 }), {
      ...fakeClock(),
      fetch: hang,
    });
    assert.equal(out.result, 'failed');
    assert.match(
      out.measurements[0]!.message,
      /^GET http:\/\/prom\.test:9090\/api\/v1\/query: no answer within 20 ms$/,
    );
  });

  test('the bearer token is read from the named file, fresh each time', async () => {
    const f = answering(['0']);
    let reads = 0;
    const readFile = async (p: string) => {
      assert.equal(p, '/var/run/secrets/prom-token');
      return `token-${++reads}\n`;
    };
    await evaluatePrometheusGate('g', gate({ count: 2, auth: { bearerTokenFile: '/var/run/secrets/prom-token' } }), {
      ...fakeClock(),
      fetch: f.fetch,
      readFile,
    });
    assert.deepEqual(
      f.requests.map((r) => r.headers.get('authorization')),
      ['Bearer token-1', 'Bearer token-2'],
    );
  });

  test('a missing token env var is an error measurement, and no request goes out', async () => {
    const f = answering(['0']);
    const out = await evaluatePrometheusGate(
      'g',
      gate({ count: 1, consecutiveErrorLimit: 0, auth: { bearerTokenEnv: 'NOPE' } }),
      { ...fakeClock(), fetch: f.fetch, env: {} },
    );
    assert.equal(out.measurements[0]!.message, 'bearer token: environment variable NOPE is not set or empty');
    assert.equal(f.requests.length, 0);
  });

  test('an unreadable token file is an error measurement', async () => {
    const readFile = async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOENT' });
    };
    const out = await evaluatePrometheusGate(
      'g',
      gate({ count: 1, consecutiveErrorLimit: 0, auth: { bearerTokenFile: '/x' } }),
      { ...fakeClock(), fetch: answering(['0']).fetch, readFile },
    );
    assert.equal(out.measurements[0]!.message, 'bearer token: cannot read /x: ENOENT');
  });
});

describe('Prometheus gate interruption', () => {
  test('an abort during the wait ends with interrupted', async () => {
    const ac = new AbortController();
    const f = answering(['0']);
    const sleep: Sleep = async () => {
      ac.abort();
      return false;
    };
    const out = await evaluatePrometheusGate('g', gate({ initialDelayMs: 1000 }), {
      sleep,
      now: () => 0,
      fetch: f.fetch,
      signal: ac.signal,
    });
    assert.equal(out.result, 'interrupted');
    assert.equal(f.requests.length, 0);
  });

  test('an abort during a query ends with interrupted, not an error', async () => {
    const ac = new AbortController();
    const hang: typeof fetch = (_input, init) => {
      setImmediate(() => ac.abort());
      return new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)),
      );
    };
    const out = await evaluatePrometheusGate('g', gate(), { ...fakeClock(), fetch: hang, signal: ac.signal });
    assert.equal(out.result, 'interrupted');
    assert.equal(out.measurements.length, 0);
    assert.equal(out.message, 'g: interrupted after 0 of 4 measurements');
  });
});

describe('Prometheus gate: dryRun and consecutiveSuccessLimit', () => {
  test('a dry-run gate that would fail passes, with every measurement and what would have happened', async () => {
    const clock = fakeClock();
    const f = answering(['0.5', '0', '0']);
    const out = await evaluatePrometheusGate('g', gate({ dryRun: true, count: 3 }), { ...clock, fetch: f.fetch });
    assert.equal(out.result, 'passed');
    assert.equal(out.wouldHave?.result, 'failed');
    assert.match(
      out.wouldHave?.message ?? '',
      /^g: result 0\.5 matched failureCondition result >= 0\.05 at measurement 1 of 3$/,
    );
    assert.match(out.message, /^g: dry run; would have failed: result 0\.5/);
    assert.equal(out.measurements.length, 1, 'it ends where the real gate would have');
    assert.equal(out.measurements[0]?.phase, 'failed');
  });

  test('consecutiveSuccessLimit ends the gate early once reached', async () => {
    const clock = fakeClock();
    const f = answering(['0', '0']);
    const out = await evaluatePrometheusGate('g', gate({ count: 10, consecutiveSuccessLimit: 2 }), {
      ...clock,
      fetch: f.fetch,
    });
    assert.equal(out.result, 'passed');
    assert.equal(f.requests.length, 2);
    assert.match(
      out.message,
      /2 measurements successful in a row \(consecutiveSuccessLimit 2\) at measurement 2 of 10/,
    );
  });
});
