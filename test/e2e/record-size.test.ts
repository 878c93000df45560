// The rollout record under a ConfigMap's 1 MiB when the plan itself is near 1 MiB and 120 pods
// are in flight at once, run by the real `kwave run`: the record is written (the API server
// refuses a ConfigMap over 1 MiB: without bounds every record write failed and the record stayed
// as the run started), it says what it left out, the runner says so on stderr, and `kwave status`
// reads it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect } from '../../src/cluster/connect.js';
import { byteSize, CONFIGMAP_DATA_LIMIT } from '../../src/record/bounds.js';
import { exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';

const PODS = 150;

describe('kwave run: a plan of nearly 1 MiB, 120 pods in flight', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ pods: PODS, timeScale: 0.1 });
  });
  after(async () => fleet?.close());

  test('the record is written within the limit, says what it left out, and reads back', async () => {
    const yaml = planYaml({
      name: 'big',
      waves: '[120, "100%"]',
      concurrency: 120,
      maxUnavailable: 120,
      podTimeout: '60s',
      gates: [{ name: 'soak', pause: '1s' }],
    });
    // Comment lines up to 1,040,000 bytes: the plan is valid and under the plan cap of 1 MiB.
    const padding = `# ${'x'.repeat(97)}\n`.repeat(Math.floor((1_040_000 - yaml.length) / 100));
    const plan = await fleet.writePlan('big.yaml', yaml + padding);

    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 0, `exit ${exit.code}\n${run.stderr()}`);
    assert.match(
      run.stderr(),
      /the rollout record kwave-big would not fit a ConfigMap \(1048576 bytes\) whole: it leaves out the end of plan\.yaml/,
    );
    assert.doesNotMatch(run.stderr(), /saving the rollout record failed/);

    const cluster = connect({ kubeconfig: fleet.kubeconfig, env: {} });
    const cm = await cluster.getConfigMap('default', 'kwave-big').finally(() => cluster.close());
    const bytes = Object.entries(cm.data ?? {}).reduce((n, [k, v]) => n + byteSize(k) + byteSize(v), 0);
    assert.ok(bytes <= CONFIGMAP_DATA_LIMIT, `${bytes} bytes`);
    assert.match(cm.data!['plan.yaml']!, /^apiVersion: kwave\.dev\/v1alpha1\n/);
    assert.match(cm.data!['plan.yaml']!, /# … kwave kept the first lines of this plan only: .*\(\d+ bytes in all\)\n$/);

    const status = await fleet.status(plan);
    assert.equal(status.phase, 'Completed');
    assert.deepEqual(status.trimmed, ['the end of plan.yaml']);
    assert.equal(status.selected, PODS);
    assert.deepEqual(status.counts, { pending: 0, in_progress: 0, upgraded: PODS, failed: 0, skipped: 0, vanished: 0 });
    const text = await fleet.kwave(['status', plan]);
    assert.match(text.stdout, /left out to fit the ConfigMap: the end of plan\.yaml/);
  });
});
