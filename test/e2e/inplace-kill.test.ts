// A process killed (SIGKILL) at each step of a pod's flow, then a new one started: the pod ends
// upgraded with restartCount +1 exactly, one image patch in all, and its gate open.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { conditionStatus, containerStatus, isPodReady } from '../../src/inplace/podView.js';
import { simCluster, type SimCluster } from './helpers/simCluster.js';

const CHILD = new URL('./helpers/podFlowChild.ts', import.meta.url).pathname;

/** Runs the child; if `killAt` is given, SIGKILLs it the moment it reports that step. */
function runChild(kubeconfig: string, pod: string, image: string, killAt?: string): Promise<{ killed: boolean; outcome?: { kind: string } }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, kubeconfig, pod, image], { stdio: ['ignore', 'pipe', 'inherit'] });
    let killed = false;
    let outcome: { kind: string } | undefined;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (killAt && line === `STEP ${killAt}` && !killed) {
        killed = true;
        child.kill('SIGKILL');
      }
      if (line.startsWith('OUTCOME ')) outcome = JSON.parse(line.slice(8)) as { kind: string };
    });
    child.on('error', reject);
    child.on('close', () => resolve({ killed, ...(outcome ? { outcome } : {}) }));
  });
}

describe('a flow killed at each step resumes in a new process', () => {
  let h: SimCluster;
  before(async () => {
    h = await simCluster({ pods: 6 });
  });
  after(async () => h.close());

  const steps = ['close-gate', 'wait-drain', 'patch', 'wait-complete', 'open-gate', 'wait-ready'];
  for (const [i, step] of steps.entries()) {
    test(`killed at ${step}`, async () => {
      const pod = `demo-${i}`;
      const before = containerStatus(h.pod(pod), 'nginx')!;
      await h.resetStats();
      const first = await runChild(h.kubeconfig, pod, 'nginx:1.25.3', step);
      assert.equal(first.killed, true, `the first process reached ${step}`);
      const second = await runChild(h.kubeconfig, pod, 'nginx:1.25.3');
      assert.equal(second.outcome?.kind, 'done', JSON.stringify(second.outcome));
      const p = h.pod(pod);
      const cs = containerStatus(p, 'nginx')!;
      assert.equal(cs.restartCount, (before.restartCount ?? 0) + 1, 'restarted exactly once');
      assert.notEqual(cs.imageID, before.imageID);
      assert.equal(conditionStatus(p, 'kwave.dev/in-place-ready'), 'True');
      assert.equal(isPodReady(p), true);
      const stats = await h.stats();
      assert.equal(stats.requests['patch pods'], 1, 'one image patch across both processes');
    });
  }
});
