// Defaults kwave takes when it runs in a pod (JSON lines, metrics on every interface), below any flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inClusterDefaults } from '../../../src/cli/inClusterDefaults.js';

const base = { inCluster: true, stdoutIsTTY: false, outputGiven: false, metricsAddressGiven: false };

test('in a pod: JSON lines on a piped stdout and metrics on every interface', () => {
  assert.deepEqual(inClusterDefaults(base), { output: 'json', metricsAddress: '0.0.0.0:9464' });
});
test('flags win; a TTY keeps text; outside a pod nothing changes', () => {
  assert.deepEqual(inClusterDefaults({ ...base, outputGiven: true, metricsAddressGiven: true }), {});
  assert.deepEqual(inClusterDefaults({ ...base, stdoutIsTTY: true }), { metricsAddress: '0.0.0.0:9464' });
  assert.deepEqual(inClusterDefaults({ ...base, inCluster: false }), {});
});
