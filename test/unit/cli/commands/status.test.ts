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
    assert.deepEqual(recordOf(plan, recordConfigMap('shop', record)), record);
  });

  test('damaged: an internal error (exit 1) naming the ConfigMap and what is wrong', () => {
    const cm = recordConfigMap(
      'shop',
      newRecord({ plan: 'web', revision: plan.revision, planText: '', holder: 'h', now: '2025-01-01T00:00:00.000Z' }),
    );
    cm.data!['status.json'] = '{not json';
    assert.throws(
      () => recordOf(plan, cm),
      (err: unknown) =>
        err instanceof KwaveError &&
        err.exitCode === 1 &&
        err.message === 'the rollout record ConfigMap shop/kwave-web is damaged: status.json is not valid JSON',
    );
  });
});
