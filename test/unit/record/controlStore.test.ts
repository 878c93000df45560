// People's decisions written into `kwave-<plan>.control`: created by the first decision, then
// guarded updates; a write by someone else in between (409) is read and decided again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { readDecisions, updateDecisions, writeControl, type DecisionsApi } from '../../../src/record/controlStore.js';
import { decodeControl, requestControl } from '../../../src/record/control.js';

/** One namespace of ConfigMaps with resourceVersions, as the API server keeps them. */
function fakeServer() {
  const objects = new Map<string, V1ConfigMap>();
  let rv = 0;
  const calls: string[] = [];
  const store = (cm: V1ConfigMap) => {
    const kept = structuredClone({ ...cm, metadata: { ...cm.metadata, resourceVersion: String(++rv) } });
    objects.set(cm.metadata!.name!, kept);
    return structuredClone(kept);
  };
  let beforeWrite: (() => void) | undefined;
  const api: DecisionsApi = {
    getConfigMap: async (_ns, name) => {
      calls.push(`get ${name}`);
      const cm = objects.get(name);
      if (!cm) throw new KubeError(404, 'NotFound', `configmaps "${name}" not found`);
      return structuredClone(cm);
    },
    createConfigMap: async (_ns, body) => {
      calls.push(`create ${body.metadata!.name}`);
      const hook = beforeWrite;
      beforeWrite = undefined;
      hook?.();
      if (objects.has(body.metadata!.name!)) throw new KubeError(409, 'AlreadyExists', 'already exists');
      return store(body);
    },
    updateConfigMap: async (_ns, body) => {
      calls.push(`update ${body.metadata!.name}`);
      const hook = beforeWrite;
      beforeWrite = undefined;
      hook?.();
      const cur = objects.get(body.metadata!.name!);
      if (cur?.metadata?.resourceVersion !== body.metadata?.resourceVersion)
        throw new KubeError(409, 'Conflict', 'the object has been modified');
      return store(body);
    },
  };
  return { api, objects, calls, store, then: (f: () => void) => (beforeWrite = f) };
}

test('the first decision creates kwave-<plan>.control (labelled as the record), the next updates it, keeping the other keys', async () => {
  const server = fakeServer();
  assert.equal(await readDecisions(server.api, 'decide', 'web'), undefined);
  assert.equal(await updateDecisions(server.api, 'decide', 'web', async () => ({ 'approval.wave-1': '{}' })), true);
  const created = server.objects.get('kwave-web.control')!;
  assert.equal(created.metadata?.labels?.['kwave.dev/plan'], 'web');
  await updateDecisions(server.api, 'decide', 'web', async (data) => ({ ...data, 'approval.wave-2': '{}' }));
  assert.deepEqual(Object.keys(server.objects.get('kwave-web.control')!.data!).sort(), [
    'approval.wave-1',
    'approval.wave-2',
  ]);
  assert.deepEqual(server.calls, [
    'get kwave-web.control',
    'get kwave-web.control',
    'create kwave-web.control',
    'get kwave-web.control',
    'update kwave-web.control',
  ]);
  assert.equal(await updateDecisions(server.api, 'decide', 'web', async () => undefined), false, 'nothing to write');
});

test('a decision written by someone else in between (409 on create or update) is read, and the request decided again', async () => {
  const server = fakeServer();
  // Another approver creates the ConfigMap between our read and our create.
  server.then(() => server.store({ metadata: { name: 'kwave-web.control' }, data: { 'approval.wave-1': 'theirs' } }));
  await updateDecisions(server.api, 'decide', 'web', async (data) => ({ ...data, 'approval.wave-2': 'ours' }));
  assert.deepEqual(server.objects.get('kwave-web.control')!.data, {
    'approval.wave-1': 'theirs',
    'approval.wave-2': 'ours',
  });

  // Bob's pause lands between our read and our update: Alice's pause, decided again, finds it.
  const bob = { action: 'pause' as const, by: 'bob', user: 'bob', at: 't1', revision: 'r' };
  const alice = { action: 'pause' as const, by: 'alice', user: 'alice', at: 't2', revision: 'r' };
  let decided = 0;
  server.then(() => {
    const cur = server.objects.get('kwave-web.control')!;
    server.store({ ...cur, data: { ...cur.data, 'control.json': JSON.stringify({ paused: bob, history: [bob] }) } });
  });
  const { decision, written } = await writeControl(server.api, 'decide', 'web', (state) => {
    decided++;
    return requestControl(state, alice, { runner: 'runner-1' });
  });
  assert.equal(decided, 2, 'decided once on the old state, once after the 409');
  assert.equal(written, false);
  assert.ok(decision.ok && !decision.changed);
  assert.match(decision.message, /^already paused by bob at t1$/);
  const state = decodeControl(server.objects.get('kwave-web.control')!.data!['control.json']).state;
  assert.equal(state.paused?.user, 'bob');
  assert.deepEqual(server.objects.get('kwave-web.control')!.data!['approval.wave-1'], 'theirs', 'the other keys kept');
});
