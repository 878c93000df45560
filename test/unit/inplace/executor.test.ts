// runPodFlow (src/inplace/executor.ts), the thin driver of one pod's flow, over the in-memory fleet.
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { runPodFlow, type FlowContext } from '../../../src/inplace/executor.js';
import type { Step } from '../../../src/inplace/decide.js';
import { GATE_CLOSED_REASON, gateMessage } from '../../../src/inplace/gateCondition.js';
import { GATE } from './fixtures.js';
import { fleet } from '../rollout/fakeFleet.js';

describe('runPodFlow', () => {
  test('returns aborted when its wait is cut short (cache closed), instead of spinning', async () => {
    const f = fleet(1);
    const view = { ...f.view, waitFor: async () => 'aborted' as const };
    const o = await runPodFlow(
      { namespace: 'web', name: 'web-0' },
      {
        plan: 'p',
        revision: 'r',
        wave: 1,
        direction: 'upgrade',
        containers: [{ name: 'nginx', image: 'nginx:1.25.3' }],
        gate: { conditionType: GATE, required: true },
        drainMs: 60_000,
        podTimeoutMs: 60_000,
        minReadyMs: 0,
      },
      { writer: f.writer, reader: view, now: Date.now },
    );
    assert.equal(o.kind, 'aborted');
  });

  const flowCtx = (drainMs: number): FlowContext => ({
    plan: 'p',
    revision: 'r',
    wave: 1,
    direction: 'upgrade',
    containers: [{ name: 'nginx', image: 'nginx:1.25.3' }],
    gate: { conditionType: GATE, required: true },
    drainMs,
    podTimeoutMs: 60_000,
    minReadyMs: 0,
  });
  /** A wall clock that starts at a whole second and runs on. */
  function fromWholeSecond() {
    const second = Math.floor(Date.now() / 1000) * 1000;
    const t0 = performance.now();
    return { second, now: () => second + (performance.now() - t0) };
  }
  /** The first `Draining` wait of a flow run to its end on the in-memory fleet, and how it ended. */
  async function firstDrainWait(f: ReturnType<typeof fleet>, drainMs: number, now: () => number) {
    const steps: Step[] = [];
    const o = await runPodFlow({ namespace: 'web', name: 'web-0' }, flowCtx(drainMs), {
      writer: f.writer,
      reader: f.view,
      now,
      onStep: (s) => steps.push(s),
    });
    const wait = steps.find((s) => s.kind === 'wait-drain' && s.reason === 'Draining');
    return { outcome: o.kind, retryAfterMs: wait?.kind === 'wait-drain' ? wait.retryAfterMs : undefined };
  }

  test('times the drain of a gate it closed from when it saw the pod not Ready: no wait for the stored second to end', async () => {
    // The close is stored in whole seconds; the clock stands at the start of that second, so the
    // stored rule would wait a second more than the drain.
    const r = await firstDrainWait(fleet(1), 200, fromWholeSecond().now);
    assert.deepEqual(r, { outcome: 'done', retryAfterMs: 200 });
  });

  test('a pod Ready again mid-drain (its kubelet writing a cached Ready back) is drained again in full', async () => {
    const f = fleet(1);
    const drainMs = 1_000;
    let patchedAt: number | undefined;
    const flow = runPodFlow({ namespace: 'web', name: 'web-0' }, flowCtx(drainMs), {
      writer: f.writer,
      reader: f.view,
      now: Date.now,
      onStep: (s) => {
        if (s.kind === 'patch') patchedAt ??= performance.now();
      },
    });
    await sleep(300);
    assert.equal(patchedAt, undefined, 'still draining');
    f.update('web/web-0', () => {}, 'True');
    await sleep(100);
    const notReadyAgainAt = performance.now();
    f.update('web/web-0', () => {});
    assert.equal((await flow).kind, 'done');
    assert.ok(
      patchedAt! - notReadyAgainAt >= drainMs - 5,
      `patched ${patchedAt! - notReadyAgainAt} ms after not Ready again`,
    );
  });

  test('a pod whose gate an earlier run closed keeps the stored-time rule: the drain ends after the stored second', async () => {
    const f = fleet(1);
    const { second, now } = fromWholeSecond();
    f.update('web/web-0', (p) =>
      Object.assign(
        p.status!.conditions!.find((c) => c.type === GATE)!,
        {
          status: 'False',
          reason: GATE_CLOSED_REASON,
          message: gateMessage('upgrade', 'p', 'r'),
          lastTransitionTime: new Date(second),
        },
      ),
    );
    const r = await firstDrainWait(f, 200, now);
    assert.equal(r.outcome, 'done');
    assert.ok(r.retryAfterMs! > 1_000 && r.retryAfterMs! <= 1_200, `waited ${r.retryAfterMs} ms`);
  });
});
