// `kwave demo --gate` as a user runs it (the built CLI): a simulated cluster of 60 pods, a real
// Prometheus it starts itself, and plans/demo-gate.yaml, whose image answers half its requests
// with a 5xx. The canary wave passes the error-rate gate; after the 10% wave the fleet's error rate
// reaches about 5%, the gate fails, the rollout halts (exit 3) and every upgraded pod is rolled back.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { missing } from './helpers/prerequisites.js';
import { kwaveCli } from './helpers/metricsRun.js';
import { embeddedOnly } from './helpers/backend.js';

const skip = missing('prometheus');
describe('kwave demo --gate', { skip: embeddedOnly('kwave demo always starts the embedded simulator') }, () => {
  test('halts on the error-rate gate after wave 2, names value and condition, and rolls the pods back', { skip }, async (t) => {
    const run = await kwaveCli(['demo', '--gate'], 120_000);
    const out = run.stdout;
    assert.equal(run.code, 3, `exit ${run.code}\n${out}\n${run.stderr}`);

    // The canary's gate passed, the second wave's failed.
    assert.match(out, /gate error-rate passed: .*result [\d.]+ matched successCondition result < 0\.02/);
    const halt = /HALTED in wave 2\/4: (error-rate: result ([\d.]+) matched failureCondition result >= 0\.04 at measurement [123] of 3)\n/.exec(out);
    assert.ok(halt, out);
    t.diagnostic(`halt: ${halt[1]}`);
    assert.ok(Number(halt[2]) >= 0.04, halt[1]);
    assert.doesNotMatch(out, /wave 3\/4 started/);

    // The summary says why it stopped and that the pods went back; the proof reads the cluster.
    const summary = /RolledBack in [\d.]+m?s: halted: (.*)\n/.exec(out);
    assert.ok(summary, out);
    assert.equal(summary[1], `${halt[1]}; rolled back every upgraded pod`);
    const rolledBack = out.match(/pod default\/demo-\d+ rolled back in/g) ?? [];
    assert.equal(rolledBack.length, 6);
    assert.match(out, /\b0\/60 pods run imageID \S+ \(nginx:errors\)/);
    assert.match(out, /\b60\/60 run \S+ \(nginx:1\.14\.2\), 6 rolled back in place/);
    assert.match(out, /\b60\/60 pods are the same pods as before/);
  });
});
