// The chaos invariants on synthetic histories: each must be able to fail. A scenario no run ended
// (a livelock) fails; the exact budget rule counts the pods kwave drained, not the pods a node
// fault made unready.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/sim/store.js';
import type { FinalState } from './cluster.js';
import { newDrainTracker, trackDrain, type DrainTracker } from './drains.js';
import { checkInvariants, type Observed } from './invariants.js';
import { defaultDigest } from '../../src/sim/index.js';
import { drawScenario, type Scenario } from './scenario.js';

const GATE = 'kwave.dev/in-place-ready';

function pod(name: string, gate: 'True' | 'False', ready: boolean, rv: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'demo' }, resourceVersion: String(rv) },
    spec: { nodeName: 'sim-node-1', containers: [{ name: 'nginx', image: 'nginx:1.14.2' }] },
    status: {
      conditions: [
        { type: GATE, status: gate },
        { type: 'Ready', status: ready ? 'True' : 'False' },
      ],
    },
  };
}

function scenario(maxUnavailable: number): Scenario {
  return { ...drawScenario(1), maxUnavailable, nodeFlap: { node: 'sim-node-1', atMs: 0, forMs: 1000 } };
}

function observed(drains: DrainTracker, exits: (number | null)[] = []): Observed {
  return {
    initial: new Map(),
    annotations: new Map(),
    specImages: new Map(),
    deleted: new Set(),
    writes: 0,
    holders: [],
    nodesDown: new Set(),
    nodesThatCouldNotAct: new Set(['sim-node-1']),
    drains,
    exits,
    evicted: new Set(),
    crashes: new Map(),
    nodesDeleted: new Set(),
    patchedWhileTerminating: [],
    problems: [],
    chaosOver: true,
    stop: () => undefined,
  };
}

const final: FinalState = {
  pods: [],
  record: undefined,
  lease: undefined,
  maxNotReady: 0,
  imagePatches: undefined,
  patchesRefused: 0,
};

/** Replays `steps` ([pod, gate, ready]) over pods a..e, all Ready with their gate open at first. */
function replay(steps: [string, 'True' | 'False', boolean][]): DrainTracker {
  const t = newDrainTracker();
  let rv = 1;
  for (const name of ['a', 'b', 'c', 'd', 'e']) t.last.set(name, pod(name, 'True', true, rv++));
  for (const [name, gate, ready] of steps) trackDrain(t, 'MODIFIED', pod(name, gate, ready, rv++));
  return t;
}

const budgetViolation = (v: string[]) => v.filter((line) => line.startsWith('kwave drained'));
const livelock = (v: string[]) => v.filter((line) => line.startsWith('no run ended the plan'));

describe('chaos invariants', () => {
  test('a scenario no run ended before its deadline fails, naming the exits it saw', () => {
    const v = checkInvariants(scenario(2), final, observed(newDrainTracker(), [5, 5, 4, 5]), null);
    assert.deepEqual(livelock(v), [
      "no run ended the plan (exit 0 or 3) before the scenario's deadline: a livelock or a hang (runs exited 5, 5, 4, 5)",
    ]);
    assert.deepEqual(livelock(checkInvariants(scenario(2), final, observed(newDrainTracker(), [5, 0]), 0)), []);
  });

  test('three pods drained at once over a budget of two fail, whatever a node fault did', () => {
    const drains = replay([
      ['a', 'False', true], // gate closed on a Ready pod: drained by kwave
      ['a', 'False', false],
      ['b', 'False', true],
      ['a', 'True', true], // reopened: no longer counted
      ['c', 'False', true],
      ['d', 'False', true], // b, c, d at once
    ]);
    assert.equal(drains.most, 3);
    assert.deepEqual(budgetViolation(checkInvariants(scenario(2), final, observed(drains), 0)), [
      'kwave drained 3 pods at once (b, c, d), maxUnavailable is 2',
    ]);
  });

  test('pods made unready by their node, then started by kwave, do not count against the budget', () => {
    const drains = replay([
      ['a', 'False', true],
      ['b', 'False', true], // two drained by kwave: the budget
      ['c', 'True', false], // c, d and e unready: their node went down
      ['d', 'True', false],
      ['e', 'True', false],
      ['c', 'False', false], // closed while already unready: no more pods unavailable
      ['d', 'False', false],
    ]);
    assert.equal(drains.most, 2);
    assert.deepEqual(drains.mostPods, ['a', 'b']);
    assert.deepEqual(budgetViolation(checkInvariants(scenario(2), final, observed(drains), 0)), []);
  });

  test('a patch refused by admission must halt the run (exit 3)', () => {
    const s = { ...scenario(2), image: 'nginx:1.25.3' };
    const seen = { ...observed(newDrainTracker()), refusedPod: 'demo-3' };
    const exitLine = (v: string[]) => v.filter((line) => line.startsWith('exit code'));
    assert.deepEqual(exitLine(checkInvariants(s, { ...final, patchesRefused: 1 }, seen, 0)), [
      'exit code 0, expected 3 (admission refused a patch of demo-3)',
    ]);
    assert.deepEqual(exitLine(checkInvariants(s, { ...final, patchesRefused: 1 }, seen, 3)), []);
    assert.deepEqual(exitLine(checkInvariants(s, final, seen, 0)), [], 'the pod went before kwave patched it');
  });

  test('a crash after the gate reopened is one restart more, never a second patch: the count is exact', () => {
    const s = { ...scenario(2), image: 'nginx:1.25.3' };
    const target = `docker.io/library/nginx@${defaultDigest('docker.io/library/nginx:1.25.3')}`;
    const upgraded = (restartCount: number): KubeObject => ({
      ...pod('a', 'True', true, 50),
      spec: { nodeName: 'sim-node-1', containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] },
      status: {
        conditions: [{ type: GATE, status: 'True' }],
        containerStatuses: [
          { name: 'nginx', image: 'nginx:1.25.3', imageID: target, restartCount, state: { running: {} } },
        ],
      },
    });
    const seen = observed(newDrainTracker());
    seen.initial.set('a', { imageID: 'old', restartCount: 0 });
    seen.annotations.set('a', new Set([JSON.stringify({ revision: 'r1' })]));
    seen.crashes.set('a', 1);
    const restartLines = (restartCount: number) =>
      checkInvariants(s, { ...final, pods: [upgraded(restartCount)] }, seen, 0).filter((l) => l.startsWith('a:'));
    assert.deepEqual(restartLines(2), [], 'one restart for the patch, one for the crash');
    assert.deepEqual(restartLines(1), [
      'a: crashed 1 times after its gate reopened, 1 upgrade patches, yet restarted 1 times',
    ]);
    const waiting = upgraded(1);
    (waiting.status as { containerStatuses: { state: object }[] }).containerStatuses[0]!.state = {
      waiting: { reason: 'CrashLoopBackOff' },
    };
    assert.deepEqual(
      checkInvariants(s, { ...final, pods: [waiting] }, seen, 0).filter((l) => l.startsWith('a:')),
      [],
      "the crash's restart still pending at the end (the kubelet's back-off)",
    );
    assert.deepEqual(restartLines(3), [
      'a: restarted 3 times for 1 upgrade and 0 rollback patches and 1 crashes',
      'a: crashed 1 times after its gate reopened, 1 upgrade patches, yet restarted 3 times',
    ]);
  });

  test('an image patch that landed on a pod being deleted fails the scenario', () => {
    const seen = { ...observed(newDrainTracker()), patchedWhileTerminating: ['demo-2 (nginx:1.14.2 → nginx:1.25.3)'] };
    assert.deepEqual(
      checkInvariants(scenario(2), final, seen, 0).filter((l) => l.startsWith('kwave patched')),
      ['kwave patched the image of a pod being deleted: demo-2 (nginx:1.14.2 → nginx:1.25.3)'],
    );
  });

  test('a deleted pod leaves the count', () => {
    const t = replay([
      ['a', 'False', true],
      ['b', 'False', true],
    ]);
    trackDrain(t, 'DELETED', pod('a', 'False', false, 100));
    trackDrain(t, 'MODIFIED', pod('c', 'False', true, 101));
    assert.equal(t.drained.size, 2);
    assert.equal(t.most, 2);
  });
});
