// The simulated kubelet seen through the real kubectl and through client-node: an image patch
// restarts the container with a new containerID, imageID and restartCount; the readiness-gate
// condition, written on pods/status, flips Ready.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { conditionStatus, containerStatus, isPodReady } from '../../src/inplace/podView.js';
import { NEW_ID } from './helpers/images.js';
import { missing } from './helpers/prerequisites.js';
import { simCluster, type SimCluster } from './helpers/simCluster.js';

const run = promisify(execFile);
const GATE = 'kwave.dev/in-place-ready';

const skip = missing('kubectl');
describe('the simulated kubelet through kubectl and client-node', () => {
  let h: SimCluster;
  const kubectl = async (...args: string[]) =>
    (
      await run(
        'kubectl',
        ['--kubeconfig', h.kubeconfig, '--cache-dir', `${h.dir}/kubectl-cache`, '--request-timeout=20s', ...args],
        { timeout: 30_000, encoding: 'utf8' },
      )
    ).stdout;
  const getPod = async (name: string) => JSON.parse(await kubectl('get', 'pod', name, '-o', 'json')) as V1Pod;
  before(async () => {
    if (skip) return;
    h = await simCluster({ pods: 3 });
  });
  after(async () => {
    if (!skip) await h.close();
  });

  test(
    'kubectl patch of an image: the kubelet restarts the container with a new containerID, imageID and restartCount',
    { skip },
    async () => {
      const before = containerStatus(await getPod('demo-0'), 'nginx')!;
      assert.equal(
        (
          await kubectl(
            'patch',
            'pod',
            'demo-0',
            '-p',
            '{"spec":{"containers":[{"name":"nginx","image":"nginx:1.25.3"}]}}',
          )
        ).trim(),
        'pod/demo-0 patched',
      );
      // Watched through client-node (kwave's own cache), not polled.
      const done = await h.cache.waitFor(
        'default',
        'demo-0',
        (p) => containerStatus(p, 'nginx')?.restartCount === 1 && isPodReady(p),
        { timeoutMs: 15_000 },
      );
      assert.notEqual(typeof done, 'string', `the restart was seen: ${String(done)}`);
      const after = containerStatus(await getPod('demo-0'), 'nginx')!;
      assert.equal(after.restartCount, (before.restartCount ?? 0) + 1);
      assert.notEqual(after.containerID, before.containerID);
      assert.match(after.containerID ?? '', /^containerd:\/\/[0-9a-f]{64}$/);
      assert.equal(after.imageID, NEW_ID);
      assert.equal(after.image, 'docker.io/library/nginx:1.25.3');
      assert.equal(after.lastState?.terminated?.containerID, before.containerID);
      const restarts = (await kubectl('get', 'pod', 'demo-0', '--no-headers')).trim().split(/\s+/)[3];
      assert.equal(restarts, '1');
    },
  );

  test('the readiness-gate condition on pods/status flips Ready, with the kubelet reason', { skip }, async () => {
    const status = (value: 'True' | 'False') =>
      kubectl(
        'patch',
        'pod',
        'demo-1',
        '--subresource=status',
        '-p',
        JSON.stringify({ status: { conditions: [{ type: GATE, status: value }] } }),
      );
    await status('False');
    const unready = await h.cache.waitFor('default', 'demo-1', (p) => !isPodReady(p), { timeoutMs: 10_000 });
    assert.notEqual(typeof unready, 'string');
    const pod = await getPod('demo-1');
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'ReadinessGatesNotReady');
    assert.match(
      ready?.message ?? '',
      /the status of pod readiness gate "kwave.dev\/in-place-ready" is not "True", but False/,
    );
    assert.equal(
      conditionStatus(pod, 'ContainersReady'),
      'True',
      'the containers stay ready: only the gate holds the pod back',
    );
    assert.match(await kubectl('get', 'pod', 'demo-1', '--no-headers', '-o', 'wide'), /0\/1/);

    await status('True');
    const back = await h.cache.waitFor('default', 'demo-1', (p) => isPodReady(p), { timeoutMs: 10_000 });
    assert.notEqual(typeof back, 'string');
    assert.equal(conditionStatus(await getPod('demo-1'), 'Ready'), 'True');
  });
});
