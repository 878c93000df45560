// What the simulator exposes: its kubeconfig (it holds the bearer token) is mode 0600 even over
// an existing file, and its admin port (no auth; deletes pods, switches faults) binds loopback
// only, whatever address the API server serves on.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAdminServer } from '../../../src/sim/adminServer.js';
import { Admission } from '../../../src/sim/apiserver/admission.js';
import { embeddedControl } from '../../../src/sim/embeddedControl.js';
import { startSim } from '../../../src/sim/index.js';

describe('simulator exposure', () => {
  test('the kubeconfig is written mode 0600, also over a world-readable file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kwave-sim-exposure-'));
    const path = join(dir, 'kubeconfig');
    await writeFile(path, 'old', { mode: 0o644 });
    const sim = await startSim({ pods: 1, kubeconfigOut: path });
    try {
      assert.equal((await stat(path)).mode & 0o777, 0o600);
    } finally {
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the admin port stays on loopback when the API server binds every interface', async () => {
    const sim = await startSim({ pods: 1, host: '0.0.0.0' });
    try {
      assert.match(sim.url, /^https:\/\/0\.0\.0\.0:\d+$/);
      assert.match(sim.metricsUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal((await fetch(`${sim.metricsUrl}/healthz`)).status, 200);
    } finally {
      await sim.close();
    }
  });

  test('the admin server refuses a non-loopback address', async () => {
    const sim = await startSim({ pods: 1 });
    try {
      for (const host of ['0.0.0.0', '::', '192.0.2.1']) {
        await assert.rejects(
          startAdminServer({
            control: embeddedControl({
              store: sim.store,
              stats: sim.stats,
              faults: sim.faults,
              admission: new Admission(),
              traffic: sim.traffic,
              images: sim.images,
              kubelet: sim.kubelet,
            }),
            host,
          }),
          /binds to loopback only/,
        );
      }
    } finally {
      await sim.close();
    }
  });
});
