// Defaults kwave takes when it runs in a pod (JSON lines, metrics on every interface), below any
// flag; outside a pod the metrics server keeps to loopback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inClusterDefaults, METRICS_ADDRESS, runsInPod } from '../../../src/cli/inClusterDefaults.js';

const base = { inCluster: true, stdoutIsTTY: false, outputGiven: false, metricsAddressGiven: false };

test('in a pod: JSON lines on a piped stdout and metrics on every interface', () => {
  assert.deepEqual(inClusterDefaults(base), { output: 'json', metricsAddress: '0.0.0.0:9464' });
});
test('flags win; a TTY keeps text; outside a pod nothing changes', () => {
  assert.deepEqual(inClusterDefaults({ ...base, outputGiven: true, metricsAddressGiven: true }), {});
  assert.deepEqual(inClusterDefaults({ ...base, stdoutIsTTY: true }), { metricsAddress: '0.0.0.0:9464' });
  assert.deepEqual(inClusterDefaults({ ...base, inCluster: false }), {});
});
test("the metrics address without the flag: loopback in a laptop's environment, every interface in a pod's", () => {
  const dir = mkdtempSync(join(tmpdir(), 'kwave-pod-env-'));
  try {
    writeFileSync(join(dir, 'token'), 't');
    writeFileSync(join(dir, 'ca.crt'), 'c');
    const pod = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443', KWAVE_SERVICEACCOUNT_DIR: dir };
    const laptop = { KUBECONFIG: join(dir, 'kubeconfig') };
    writeFileSync(laptop.KUBECONFIG, 'apiVersion: v1\nkind: Config\n');
    const address = (env: NodeJS.ProcessEnv) =>
      inClusterDefaults({ ...base, inCluster: runsInPod(undefined, env, dir) }).metricsAddress ?? METRICS_ADDRESS;
    assert.equal(address(pod), '0.0.0.0:9464');
    assert.equal(address(laptop), '127.0.0.1:9464');
    // A kubeconfig given in a pod wins over the service account: kwave is not "in a pod" then.
    assert.equal(runsInPod(laptop.KUBECONFIG, pod, dir), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
