// The quick start's `npm run demo` (`kwave demo`): the simulated cluster, plans/demo.yaml end to
// end, exit 0, and the proof: the demo's own proof line, and the pods read back from its API
// server (`--keep` leaves the cluster up for that) by the test itself.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { containerStatus, conditionStatus, isPodReady } from '../../src/inplace/podView.js';
import { embeddedOnly } from './helpers/backend.js';
import { runDemoKept } from './helpers/demoRun.js';
import { NEW_ID } from './helpers/images.js';

describe('kwave demo', { skip: embeddedOnly('kwave demo always starts the embedded simulator') }, () => {
  test('upgrades the 60 pods in 4 waves, exits 0 and shows the ImageID proof; the cluster agrees', async () => {
    const run = await runDemoKept([]);
    const out = run.output();
    assert.equal(run.code, 0, out);
    assert.match(out, /Completed in .*: completed: 60 pods upgraded/);
    assert.match(out, /^total\s+60\s+60\s+0\s+0\s/m, 'the summary table counts all 60 upgraded');
    assert.match(out, /proof: 60\/60 pods run imageID nginx@sha256:[0-9a-f]{12}… \(nginx:1\.25\.3\)/);
    assert.match(out, /container restarts of the upgraded pods: 1 /);
    assert.match(out, /60\/60 pods are the same pods as before/);

    // What the API server serves: 60 pods, each on the target's imageID, restarted once in place
    // (a recreated pod would start again at restartCount 0), back in service.
    assert.equal(run.pods.length, 60, out);
    for (const p of run.pods) {
      const cs = containerStatus(p, 'nginx');
      const name = p.metadata!.name!;
      assert.equal(cs?.imageID, NEW_ID, name);
      assert.equal(cs?.restartCount, 1, name);
      assert.equal(conditionStatus(p, 'kwave.dev/in-place-ready'), 'True', name);
      assert.equal(isPodReady(p), true, name);
    }
  });
});
