// runGate: the order of the steps, stopping at the first that does not pass, and the metrics.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runGate, type GateContext } from '../../../src/gates/index.js';
import { gateAppliesAfterWave } from '../../../src/rollout/gateCheck.js';
import type { Gate } from '../../../src/plan/types.js';
import type { Sleep } from '../../../src/sleep.js';

function clock() {
  let now = 0;
  const sleep: Sleep = async (ms) => {
    now += ms;
    return true;
  };
  return { now: () => now, sleep };
}

const base: Gate = { name: 'g', pauseMs: 0, approval: false };
const promGate = (query: string) => ({
  address: 'http://prom.test',
  query,
  successCondition: 'result < 0.01',
  initialDelayMs: 0,
  intervalMs: 1000,
  count: 1,
  failureLimit: 0,
  inconclusiveLimit: 0,
  consecutiveErrorLimit: 0,
  noData: 'inconclusive' as const,
  timeoutMs: 1000,
  dryRun: false,
  consecutiveSuccessLimit: 0,
});

/** A fetch that records which step called it and answers 0 (Prometheus) or 200 (webhook). */
function recorder(log: string[], promValue = '0') {
  const f: typeof fetch = async (_input, init) => {
    if (init?.method === 'POST') {
      log.push(`webhook ${init.body}`);
      return new Response('', { status: 200 });
    }
    log.push('prometheus');
    return new Response(JSON.stringify({ status: 'success', data: { resultType: 'scalar', result: [1, promValue] } }));
  };
  return f;
}

function ctx(log: string[], over: Partial<GateContext> = {}): GateContext {
  return {
    plan: 'web',
    revision: 'r1',
    wave: 1,
    phase: 'Progressing',
    ...clock(),
    fetch: recorder(log),
    onPause: (left) => log.push(`pause ${left}`),
    isApproved: async () => (log.push('isApproved'), false),
    waitForApproval: async () => void log.push('approved'),
    onAwaitingApproval: () => log.push('awaiting'),
    ...over,
  };
}

describe('runGate', () => {
  test('pause → approval → prometheus → webhook, in that order', async () => {
    const log: string[] = [];
    const counted: string[] = [];
    const gate: Gate = {
      ...base,
      pauseMs: 2500,
      approval: true,
      prometheus: promGate('q'),
      webhook: { url: 'http://hook.test/x', timeoutMs: 1000, retries: 0 },
    };
    const run = await runGate(gate, ctx(log, { metrics: { gateChecked: (g, r) => counted.push(`${g} ${r}`) } }));
    assert.equal(run.result, 'passed', run.message);
    assert.deepEqual(log, [
      'pause 2500',
      'pause 1500',
      'pause 500',
      'pause 0',
      'isApproved',
      'awaiting',
      'approved',
      'prometheus',
      'webhook {"plan":"web","revision":"r1","wave":1,"phase":"Progressing"}',
    ]);
    assert.deepEqual(
      run.steps.map((s) => s.kind),
      ['pause', 'approval', 'prometheus', 'webhook'],
    );
    assert.equal(run.measurements.length, 2);
    assert.equal(
      run.message,
      `g: passed (paused 2.5s; approved; 1 of 1 measurements successful; last: result 0 matched successCondition result < 0.01; http://hook.test/… answered 200)`,
    );
    assert.deepEqual(counted, ['g passed']);
  });

  test('stops at the first step that does not pass', async () => {
    const log: string[] = [];
    const counted: string[] = [];
    const gate: Gate = {
      ...base,
      prometheus: promGate('q'),
      webhook: { url: 'http://hook.test/x', timeoutMs: 1000, retries: 0 },
    };
    const run = await runGate(
      gate,
      ctx(log, { fetch: recorder(log, '0.5'), metrics: { gateChecked: (g, r) => counted.push(`${g} ${r}`) } }),
    );
    assert.equal(run.result, 'failed');
    assert.equal(run.message, 'g: result 0.5 did not match successCondition result < 0.01 at measurement 1 of 1');
    assert.deepEqual(log, ['prometheus']);
    assert.deepEqual(counted, ['g failed']);
  });

  test('an approval given before the gate is not waited for', async () => {
    const log: string[] = [];
    const run = await runGate({ ...base, approval: true }, ctx(log, { isApproved: async () => true }));
    assert.equal(run.result, 'passed');
    assert.equal(run.message, 'g: passed (approved)');
    assert.deepEqual(log, []);
  });

  test('an approval gate without an approval source fails clearly', async () => {
    const run = await runGate({ ...base, approval: true }, { plan: 'p', revision: 'r', wave: 1, phase: 'Progressing' });
    assert.equal(run.result, 'failed');
    assert.match(run.message, /no way to receive approvals/);
  });

  test('SIGINT while waiting for approval: interrupted, not counted', async () => {
    const ac = new AbortController();
    const counted: string[] = [];
    const run = await runGate(
      { ...base, approval: true },
      ctx([], {
        signal: ac.signal,
        metrics: { gateChecked: (g, r) => counted.push(`${g} ${r}`) },
        waitForApproval: (signal) =>
          new Promise((_resolve, reject) => {
            signal?.addEventListener('abort', () => reject(new Error('aborted')));
            ac.abort();
          }),
      }),
    );
    assert.equal(run.result, 'interrupted');
    assert.deepEqual(counted, []);
  });

  test('SIGINT during a pause reports the time left', async () => {
    const ac = new AbortController();
    let now = 0;
    const sleep: Sleep = async (ms) => {
      now += ms;
      if (now >= 2000) {
        ac.abort();
        return false;
      }
      return true;
    };
    const run = await runGate({ ...base, pauseMs: 60_000 }, ctx([], { sleep, now: () => now, signal: ac.signal }));
    assert.equal(run.result, 'interrupted');
    assert.equal(run.message, 'g: interrupted with 58s of the pause left');
  });

  test('a gate with nothing to check passes', async () => {
    const run = await runGate(base, ctx([]));
    assert.equal(run.result, 'passed');
    assert.equal(run.message, 'g: passed (nothing to check)');
  });
});

describe('gateAppliesAfterWave', () => {
  test('default: every wave but the last', () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((w) => gateAppliesAfterWave({}, w, 4)),
      [true, true, true, false],
    );
  });
  test('afterWaves lists them', () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((w) => gateAppliesAfterWave({ afterWaves: [1, 4] }, w, 4)),
      [true, false, false, true],
    );
  });
});
