// kwave status's pure parts: where a plan's record lives, the refusal when there is none, and a
// damaged record reported (exit 1) rather than shown.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { notRun, recordNamespace, recordOf } from '../../../../src/cli/commands/status.js';
import { KwaveError } from '../../../../src/errors.js';
import { recordConfigMap } from '../../../../src/record/codec.js';
import { newRecord } from '../../../../src/record/record.js';
import { testPlan } from '../../helpers/plans.js';

const plan = testPlan({ name: 'web', namespaces: ['shop', 'api'] });

describe('the record of a plan', () => {
  test("lives in the plan's first target namespace", () => {
    assert.equal(recordNamespace(plan), 'shop');
  });

  test('none: a refusal (exit 2) naming the namespace and the ConfigMap', () => {
    const err = notRun(plan);
    assert.equal(err.code, 'REFUSED');
    assert.equal(err.exitCode, 2);
    assert.equal(err.message, 'plan web has not been run in namespace shop (no rollout record ConfigMap kwave-web)');
  });

  test('read back from its ConfigMap as the runner wrote it', () => {
    const record = newRecord({
      plan: 'web',
      revision: plan.revision,
      planText: plan.source.text,
      holder: 'alice@laptop',
      now: '2025-01-01T00:00:00.000Z',
    });
    assert.deepEqual(recordOf(plan, recordConfigMap('shop', record), undefined), record);
  });

  test("an earlier kwave's record keeps its decisions in its own keys: shown; the decisions ConfigMap's take their place", () => {
    const record = newRecord({
      plan: 'web',
      revision: plan.revision,
      planText: '',
      holder: 'h',
      now: '2025-01-01T00:00:00.000Z',
    });
    const old = recordConfigMap('shop', record);
    const pause = { action: 'pause', by: 'bob@desk', at: '2025-01-01T00:01:00.000Z', revision: plan.revision };
    old.data!['approval.wave-1'] = JSON.stringify({ by: 'bob@desk', at: '2025-01-01T00:02:00.000Z' });
    old.data!['control.json'] = JSON.stringify({ paused: pause, history: [pause] });
    const legacy = recordOf(plan, old, undefined);
    assert.equal(legacy.approvals[1]?.by, 'bob@desk');
    assert.equal(legacy.control?.paused?.by, 'bob@desk');
    const approval = {
      by: 'alice (alice@laptop)',
      user: 'alice',
      at: '2025-01-01T00:03:00.000Z',
      revision: plan.revision,
    };
    const decisions = {
      metadata: { name: 'kwave-web.control' },
      data: { 'approval.wave-2': JSON.stringify(approval) },
    };
    const now = recordOf(plan, old, decisions);
    assert.deepEqual(now.approvals, { 2: approval });
    assert.equal(now.control, undefined, 'no request in the decisions ConfigMap: none stands');
  });

  test('damaged: an internal error (exit 1) naming the ConfigMap and what is wrong', () => {
    const cm = recordConfigMap(
      'shop',
      newRecord({ plan: 'web', revision: plan.revision, planText: '', holder: 'h', now: '2025-01-01T00:00:00.000Z' }),
    );
    cm.data!['status.json'] = '{not json';
    assert.throws(
      () => recordOf(plan, cm, undefined),
      (err: unknown) =>
        err instanceof KwaveError &&
        err.exitCode === 1 &&
        err.message === 'the rollout record ConfigMap shop/kwave-web is damaged: status.json is not valid JSON',
    );
  });
});
