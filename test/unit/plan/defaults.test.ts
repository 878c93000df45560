// A plan without `strategy` takes the defaults docs/plan-reference.md gives it (one wave of 100%, concurrency
// 1, maxUnavailable = concurrency), and a missing field is reported at the key of the mapping
// that lacks it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PLAN_DEFAULTS } from '../../../src/plan/defaults.js';
import { loadPlanText } from '../../../src/plan/load.js';
import { PLAN_HEAD as HEAD } from './texts.js';

describe('a plan without strategy', () => {
  test('loads as one wave of 100%, concurrency 1, maxUnavailable 1', () => {
    const r = loadPlanText(HEAD, 'plan.yaml');
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    assert.deepEqual(r.plan.strategy.waves, { kind: 'targets', targets: [{ kind: 'fraction', value: 1 }] });
    assert.equal(r.plan.strategy.concurrency, PLAN_DEFAULTS.strategy.concurrency);
    assert.deepEqual(r.plan.strategy.maxUnavailable, { kind: 'count', value: 1 });
  });

  test('is the same plan (same revision) as one that writes those defaults out', () => {
    const bare = loadPlanText(HEAD, 'a.yaml');
    const written = loadPlanText(
      HEAD + '  strategy: { waves: ["100%"], concurrency: 1, maxUnavailable: 1 }\n',
      'b.yaml',
    );
    assert.ok(bare.ok && written.ok);
    assert.equal(bare.plan.revision, written.plan.revision);
  });

  test('a gate after wave 1 of a plan without strategy is refused as out of range only past wave 1', () => {
    const gate = '  gates: [{ name: g, pause: 1s, afterWaves: [2] }]\n';
    const r = loadPlanText(HEAD + gate, 'plan.yaml');
    assert.equal(r.ok, false);
  });
});

describe('a missing field', () => {
  test('points at the key of the mapping that lacks it: spec, not its first field', () => {
    const r = loadPlanText(HEAD.replace('    selector: { matchLabels: { app: web } }\n', ''), 'plan.yaml');
    assert.ok(!r.ok);
    const e = r.errors.find((x) => x.message.includes('"selector"'));
    assert.ok(e, JSON.stringify(r.errors));
    assert.deepEqual([e.pos.line, e.pos.col], [5, 3], 'at `target:`');
  });

  test('a missing top-level field points at the start of the document', () => {
    const r = loadPlanText(HEAD.replace('metadata: { name: web }\n', ''), 'plan.yaml');
    assert.ok(!r.ok);
    const e = r.errors.find((x) => x.message.includes('"metadata"'));
    assert.ok(e, JSON.stringify(r.errors));
    assert.deepEqual([e.pos.line, e.pos.col], [1, 1]);
  });
});
