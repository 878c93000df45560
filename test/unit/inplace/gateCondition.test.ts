// The gate-closing write's Ready condition (gateCondition.ts): written False with the gate when the
// pod is Ready, with kwave's message for a drain and the kubelet's when the image patch follows at once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, type Step } from '../../../src/inplace/decide.js';
import { keepDrained } from '../../../src/inplace/gateCondition.js';
import { expectKind, GATE, makePod, UPGRADE_CTX } from './fixtures.js';

const ctx = UPGRADE_CTX;

describe('the gate-closing write and Ready', () => {
  test('no drain: Ready False with the kubelet’s own message, which leaves it nothing to write', () => {
    const s = expectKind(decide(makePod({}), { ...ctx, drainMs: 0 }), 'close-gate');
    assert.deepEqual(s.body.status.conditions[1], {
      type: 'Ready',
      status: 'False',
      reason: 'ReadinessGatesNotReady',
      message: `the status of pod readiness gate "${GATE}" is not "True", but False`,
      lastTransitionTime: '2025-01-01T00:00:00Z',
    });
  });
  test('a failed pod still Ready: the re-close turns it not Ready too, unguarded', () => {
    const failed: Step = { kind: 'failed', reason: 'Timeout', message: 'x' };
    const step = keepDrained(makePod({ rv: '42' }), ctx, failed);
    assert.ok(step.kind === 'failed' && step.reclose);
    assert.equal(step.reclose.metadata, undefined);
    assert.deepEqual(
      step.reclose.status.conditions.map((c) => [c.type, c.status, c.reason]),
      [
        [GATE, 'False', 'InPlaceUpdate'],
        ['Ready', 'False', 'ReadinessGatesNotReady'],
      ],
    );
  });
  test('a pod already not Ready: the gate alone (Ready stays the kubelet’s)', () => {
    const s = expectKind(decide(makePod({ ready: false }), ctx), 'close-gate');
    assert.deepEqual(
      s.body.status.conditions.map((c) => c.type),
      [GATE],
    );
  });
});
