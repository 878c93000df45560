// runPodFlow (src/inplace/executor.ts), the thin driver of one pod's flow, over the in-memory fleet.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runPodFlow } from '../../../src/inplace/executor.js';
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
});
