// A process killed (SIGKILL) at each step of a pod's flow, then a new one started: the pod ends
// upgraded with restartCount +1 exactly, one image patch in all, and its gate open.
//
// Each kill lands where its test says, and the test checks it from the cluster before and after:
// - a write (close-gate, patch, open-gate): on the embedded backend the simulator writes it and
//   holds its answer (POST /sim/admission `hold`), so the process is killed between the write and
//   its answer; the real kube-apiserver has no such hook, so there the test kills once the write
//   is visible in the cluster, and the next step cannot have begun (see the waits below);
// - a wait: the first process waits far longer than the test (a 30 min drain or minReady, a
//   target image whose pull takes 20 s), so the kill cannot miss it on a slow machine.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { V1Pod } from '@kubernetes/client-node';
import { conditionStatus, containerStatus, isPodReady } from '../../src/inplace/podView.js';
import type { AdmissionRule } from '../../src/sim/apiserver/admission.js';
import { BACKEND } from './helpers/backend.js';
import { simCluster, type SimCluster } from './helpers/simCluster.js';
import { OLD_ID } from './helpers/images.js';

const CHILD = new URL('./helpers/podFlowChild.ts', import.meta.url).pathname;
const GATE = 'kwave.dev/in-place-ready';
const LONG_MS = String(30 * 60_000);
const BOUND_MS = 180_000;
const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
images:
  "nginx:1.14.2": {}
  "nginx:1.25.3": {}
  "nginx:1.25.3-slow": { pullSeconds: 20 }
workloads:
  - { name: demo, replicas: 6, labels: { app: demo }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
`;

interface Child {
  child: ChildProcess;
  steps: string[];
  /** Resolves when the process reports `step` (or rejects when it ends first). */
  step(step: string): Promise<void>;
  ended: Promise<{ signal: NodeJS.Signals | null; outcome?: { kind: string } }>;
}

function startChild(kubeconfig: string, pod: string, image: string, drainMs = '300', minReadyMs = '300'): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, kubeconfig, pod, image, drainMs, minReadyMs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const steps: string[] = [];
  const waiting: { step: string; resolve: () => void }[] = [];
  let outcome: { kind: string } | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('STEP ')) {
      steps.push(line.slice(5));
      for (const w of waiting.filter((x) => x.step === line.slice(5))) w.resolve();
    }
    if (line.startsWith('OUTCOME ')) outcome = JSON.parse(line.slice(8)) as { kind: string };
  });
  const ended = new Promise<{ signal: NodeJS.Signals | null; outcome?: { kind: string } }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve({ signal, ...(outcome ? { outcome } : {}) }));
  });
  return {
    child,
    steps,
    step: (step) =>
      steps.includes(step)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((resolve) => waiting.push({ step, resolve })),
            ended.then(() =>
              Promise.reject(new Error(`the process ended before step ${step} (steps ${steps.join(', ')})`)),
            ),
          ]),
    ended,
  };
}

interface KillCase {
  step: string;
  image: string;
  drainMs?: string;
  minReadyMs?: string;
  /** Embedded: the write whose answer is held while the process is killed. */
  hold?: AdmissionRule;
  /** The write as the cluster shows it (a write step kills once it is there). */
  written?: (pod: V1Pod) => boolean;
  /** Where the pod stands after the kill: proof that the kill landed at this step. */
  landed: (pod: V1Pod) => void;
}

const gate = (p: V1Pod) => conditionStatus(p, GATE);
const nginx = (p: V1Pod) => containerStatus(p, 'nginx')!;
const specImage = (p: V1Pod) => p.spec!.containers.find((c) => c.name === 'nginx')!.image;
const notPatched = (p: V1Pod) => {
  assert.equal(specImage(p), 'nginx:1.14.2', 'not patched yet');
  assert.equal(nginx(p).imageID, OLD_ID);
};

const CASES: KillCase[] = [
  {
    step: 'close-gate',
    image: 'nginx:1.25.3',
    drainMs: LONG_MS,
    hold: { verb: 'patch', resource: 'pods/status', hold: true, times: 1 },
    written: (p) => gate(p) === 'False',
    landed: (p) => {
      assert.equal(gate(p), 'False', 'the gate write was made');
      notPatched(p);
    },
  },
  {
    step: 'wait-drain',
    image: 'nginx:1.25.3',
    drainMs: LONG_MS,
    landed: (p) => {
      assert.equal(gate(p), 'False');
      notPatched(p);
    },
  },
  {
    step: 'patch',
    image: 'nginx:1.25.3-slow',
    hold: { verb: 'patch', resource: 'pods', hold: true, times: 1 },
    written: (p) => specImage(p) === 'nginx:1.25.3-slow',
    landed: (p) => {
      assert.equal(specImage(p), 'nginx:1.25.3-slow', 'the image patch was made');
      assert.equal(nginx(p).imageID, OLD_ID, 'the kubelet is still pulling');
      assert.equal(gate(p), 'False');
    },
  },
  {
    step: 'wait-complete',
    image: 'nginx:1.25.3-slow',
    landed: (p) => {
      assert.equal(specImage(p), 'nginx:1.25.3-slow');
      assert.equal(nginx(p).imageID, OLD_ID, 'the kubelet is still pulling');
      assert.equal(gate(p), 'False', 'the gate was not reopened');
    },
  },
  {
    step: 'open-gate',
    image: 'nginx:1.25.3',
    minReadyMs: LONG_MS,
    // The pod's second gate write: the first closed it.
    hold: { verb: 'patch', resource: 'pods/status', hold: true, skip: 1, times: 1 },
    written: (p) => gate(p) === 'True' && specImage(p) === 'nginx:1.25.3',
    landed: (p) => {
      assert.equal(gate(p), 'True', 'the gate write was made');
      assert.notEqual(nginx(p).imageID, OLD_ID);
    },
  },
  {
    step: 'wait-ready',
    image: 'nginx:1.25.3',
    minReadyMs: LONG_MS,
    landed: (p) => {
      assert.equal(gate(p), 'True');
      assert.notEqual(nginx(p).imageID, OLD_ID);
    },
  },
];

async function admission(h: SimCluster, rules: AdmissionRule[]): Promise<{ held: number }> {
  const res = await fetch(`${h.sim.metricsUrl}/sim/admission`, { method: 'POST', body: JSON.stringify(rules) });
  assert.equal(res.status, 200);
  return (await res.json()) as { held: number };
}

/** Polls until `ok` holds (a bound, not a sleep), failing with `what`. */
async function until(what: string, ok: () => boolean | Promise<boolean>, ended: Promise<unknown>): Promise<void> {
  let over = false;
  void ended.then(() => (over = true));
  const deadline = Date.now() + BOUND_MS;
  while (!(await ok())) {
    if (over) throw new Error(`the process ended before: ${what}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a flow killed at each step resumes in a new process', () => {
  let h: SimCluster;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kwave-kill-'));
    await writeFile(join(dir, 'fixture.yaml'), FIXTURE);
    h = await simCluster({ fixture: join(dir, 'fixture.yaml') });
  });
  after(async () => {
    await h?.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const [i, c] of CASES.entries()) {
    const held = BACKEND === 'embedded' && c.hold !== undefined;
    test(`killed at ${c.step}${held ? ' (between the write and its answer)' : ''}`, async () => {
      const pod = `demo-${i}`;
      const before = nginx(h.pod(pod));
      await h.resetStats();
      if (held) await admission(h, [{ ...c.hold!, name: pod }]);
      const first = startChild(h.kubeconfig, pod, c.image, c.drainMs, c.minReadyMs);
      if (held) {
        await until(
          `the ${c.step} write of ${pod} held`,
          async () =>
            ((await (await fetch(`${h.sim.metricsUrl}/sim/admission`)).json()) as { held: number }).held === 1,
          first.ended,
        );
      }
      if (c.written)
        await until(`the ${c.step} write of ${pod} in the cluster`, () => c.written!(h.pod(pod)), first.ended);
      else await first.step(c.step);
      first.child.kill('SIGKILL');
      const killed = await first.ended;
      assert.equal(killed.signal, 'SIGKILL', `killed, not ended (steps ${first.steps.join(', ')})`);
      assert.equal(killed.outcome, undefined);
      if (held) assert.equal(first.steps.at(-1), c.step, 'its answer never came: the process was still at this step');
      c.landed(h.pod(pod));
      if (held) await admission(h, []);

      const second = await startChild(h.kubeconfig, pod, c.image).ended;
      assert.equal(second.outcome?.kind, 'done', JSON.stringify(second.outcome));
      const p = h.pod(pod);
      const cs = nginx(p);
      assert.equal(cs.restartCount, (before.restartCount ?? 0) + 1, 'restarted exactly once');
      assert.notEqual(cs.imageID, before.imageID);
      assert.equal(gate(p), 'True');
      assert.equal(isPodReady(p), true);
      const stats = await h.stats();
      assert.equal(stats.requests['patch pods'], 1, 'one image patch across both processes');
    });
  }
});
