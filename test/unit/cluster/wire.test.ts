// The wire client reuses client-node's connection options (auth headers, agent) for a moment
// instead of rebuilding them per request; an Unauthorized answer must drop them at once, so a
// rotated credential is taken up by the very next request. Its requests go through undici's pool:
// a slow answer is a Timeout and closing the client fails the requests still open, as KubeErrors
// the retries know. Against the simulated API server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { WireClient } from '../../../src/cluster/wire.js';
import { startSim } from '../../../src/sim/index.js';

describe('WireClient', () => {
  test('a request answered 401 drops the reused credentials: the next one reads them again', async () => {
    const sim = await startSim({ pods: 1 });
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    const user = kc.getCurrentUser()!;
    const good = user.token;
    assert.ok(good, 'the simulator kubeconfig carries a bearer token');
    const wire = new WireClient(kc, { timeoutMs: 10_000, keepAlive: true });
    try {
      const get = () => wire.send({ method: 'GET', path: '/api/v1/namespaces/default/pods/demo-0' });
      (user as { token?: string }).token = 'not-the-token';
      await assert.rejects(get(), (err: unknown) => err instanceof KubeError && err.code === 401);
      // Rotated back within the reuse window: without the drop on 401 this would still send the old one.
      (user as { token?: string }).token = good;
      const pod = (await get()) as { metadata?: { name?: string } };
      assert.equal(pod.metadata?.name, 'demo-0');
    } finally {
      wire.close();
      await sim.close();
    }
  });

  test('through the pool: a slow answer is a Timeout, close() fails what is still open, and nothing is sent once closed', async () => {
    const sim = await startSim({ pods: 1, faults: 'latencyMs=3000' });
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    const get = { method: 'GET', path: '/api/v1/namespaces/default/pods/demo-0' } as const;
    const impatient = new WireClient(kc, { timeoutMs: 200, keepAlive: true });
    const patient = new WireClient(kc, { timeoutMs: 10_000, keepAlive: true });
    try {
      await assert.rejects(impatient.send(get), (err: unknown) => err instanceof KubeError && err.code === 0 && err.reason === 'Timeout' && /within 200 ms/.test(err.message));
      const open = patient.send(get);
      await new Promise((r) => setTimeout(r, 100));
      patient.close();
      await assert.rejects(open, (err: unknown) => err instanceof KubeError && err.reason === 'Closed');
      await assert.rejects(patient.send(get), (err: unknown) => err instanceof KubeError && err.reason === 'Closed');
    } finally {
      impatient.close();
      patient.close();
      await sim.close();
    }
  });
});
