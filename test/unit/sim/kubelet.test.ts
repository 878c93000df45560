import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultFixture } from '../../../src/sim/fixture.js';
import { defaultDigest } from '../../../src/sim/images.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import {
  condition,
  containerStatus,
  eventsFor,
  harness,
  patchImage,
  setCondition,
  waitForGone,
  waitForPod,
} from './kubeletHelpers.js';

const GATE = 'kwave.dev/in-place-ready';
const digestOf = (name: string) => defaultDigest(`docker.io/library/${name}`);

describe('kubelet: the default world', () => {
  test('pods start Running and Ready with the image table digest and the gate True', () => {
    const h = harness(3);
    try {
      const pod = h.store.get('pods', 'default', 'demo-1')!;
      const s = containerStatus(pod);
      assert.equal((pod.status as { phase: string }).phase, 'Running');
      assert.equal(s.image, 'docker.io/library/nginx:1.14.2');
      assert.equal(s.imageID, `docker.io/library/nginx@${digestOf('nginx:1.14.2')}`);
      assert.match(s.containerID!, /^containerd:\/\/[0-9a-f]{64}$/);
      assert.equal(s.ready, true);
      assert.equal(condition(pod, 'Ready')?.status, 'True');
      assert.equal(condition(pod, GATE)?.status, 'True');
      assert.deepEqual(
        (pod.status as { conditions: { type: string }[] }).conditions.map((c) => c.type),
        [GATE, 'PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'],
      );
      assert.equal((pod.spec as { nodeName: string }).nodeName, 'sim-node-2');
    } finally {
      h.close();
    }
  });
});

describe('kubelet: a changed image', () => {
  test('kills the container and starts the new image: new containerID and imageID, restartCount + 1, lastState', async () => {
    const h = harness(1);
    try {
      const before = containerStatus(h.store.get('pods', 'default', 'demo-0')!);
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:1.25.3');
      const pod = await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).image.endsWith(':1.25.3') && containerStatus(p).ready,
      );
      const after = containerStatus(pod);
      assert.equal(after.imageID, `docker.io/library/nginx@${digestOf('nginx:1.25.3')}`);
      assert.notEqual(after.containerID, before.containerID);
      assert.equal(after.restartCount, before.restartCount + 1);
      assert.ok(after.state.running?.startedAt);
      assert.equal(after.lastState.terminated?.exitCode, 0);
      assert.equal(after.lastState.terminated?.reason, 'Completed');
      assert.equal(after.lastState.terminated?.containerID, before.containerID);
      assert.ok(after.lastState.terminated?.finishedAt);
      assert.equal(condition(pod, 'Ready')?.status, 'True');
      const events = eventsFor(h.store, 'default', 'demo-0');
      const reasons = events.map((e) => e.reason);
      assert.deepEqual(reasons, ['Killing', 'Pulling', 'Pulled', 'Created', 'Started']);
      assert.equal(events[0]!.message, 'Container nginx definition changed, will be restarted');
      assert.equal(events[1]!.message, 'Pulling image "nginx:1.25.3"');
      assert.match(
        events[2]!.message,
        /^Successfully pulled image "nginx:1\.25\.3" in [\d.]+m?s \([\d.]+m?s including waiting\)\. Image size: \d+ bytes\.$/,
      );
      // The spec is never the kubelet's to change.
      assert.equal((pod.spec as { containers: { image: string }[] }).containers[0]!.image, 'nginx:1.25.3');
    } finally {
      h.close();
    }
  });

  test('a same-digest retag restarts the container with the same imageID', async () => {
    const h = harness(1);
    try {
      const before = containerStatus(h.store.get('pods', 'default', 'demo-0')!);
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:1.14.2-retag');
      const pod = await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).image.endsWith('-retag') && containerStatus(p).ready,
      );
      const after = containerStatus(pod);
      assert.equal(after.imageID, before.imageID);
      assert.notEqual(after.containerID, before.containerID);
      assert.equal(after.restartCount, 1);
    } finally {
      h.close();
    }
  });

  test('a spec changed again while the new image pulls: that container starts, then the next spec replaces it', async () => {
    const h = harness(1);
    try {
      const images: string[] = [];
      const unsubscribe = h.store.subscribe((c) => {
        if (c.resource !== 'pods') return;
        const cs = containerStatus(c.object);
        const seen = `${cs.image} ${cs.state.running ? 'running' : 'not running'}`;
        if (images[images.length - 1] !== seen) images.push(seen);
      });
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:1.25.3');
      await waitForPod(h.store, 'default', 'demo-0', () =>
        eventsFor(h.store, 'default', 'demo-0').some((e) => e.reason === 'Pulling'),
      );
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:1.14.2');
      const pod = await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) =>
          containerStatus(p).image.endsWith(':1.14.2') &&
          containerStatus(p).ready &&
          containerStatus(p).restartCount > 0,
      );
      unsubscribe();
      assert.equal(containerStatus(pod).restartCount, 2);
      assert.deepEqual(images, [
        'docker.io/library/nginx:1.14.2 running',
        'docker.io/library/nginx:1.14.2 not running',
        'docker.io/library/nginx:1.25.3 running',
        'docker.io/library/nginx:1.25.3 not running',
        'docker.io/library/nginx:1.14.2 running',
      ]);
      // Repeated Events are counted on the first (Killing, Created, Started twice each).
      const events = eventsFor(h.store, 'default', 'demo-0').map((e) => `${e.reason} ${e.count}`);
      assert.deepEqual(events, ['Killing 2', 'Pulling 1', 'Pulled 1', 'Created 2', 'Started 2', 'Pulled 1']);
    } finally {
      h.close();
    }
  });

  test('the Ready condition goes False while the container restarts, with its lastTransitionTime moving only then', async () => {
    const h = harness(1);
    try {
      const seen: string[] = [];
      const unsubscribe = h.store.subscribe((c) => {
        if (c.resource !== 'pods') return;
        const status = condition(c.object, 'ContainersReady')?.status;
        if (status && seen[seen.length - 1] !== status) seen.push(status);
      });
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:1.25.3');
      await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).image.endsWith(':1.25.3') && containerStatus(p).ready,
      );
      unsubscribe();
      assert.deepEqual(seen, ['True', 'False', 'True']);
    } finally {
      h.close();
    }
  });
});

describe('kubelet: images that fail', () => {
  test('a pull failure shows ErrImagePull, then ImagePullBackOff, and retries', async () => {
    const h = harness(1);
    try {
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:broken');
      const failed = await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).state.waiting?.reason === 'ErrImagePull',
      );
      assert.match(
        containerStatus(failed).state.waiting!.message!,
        /failed to pull and unpack image "docker\.io\/library\/nginx:broken": .*not found/,
      );
      assert.equal(condition(failed, 'Ready')?.status, 'False');
      assert.equal(condition(failed, 'ContainersReady')?.message, 'containers with unready status: [nginx]');
      // The old container's termination is kept: the pod does not fall back to Pending.
      assert.equal((failed.status as { phase: string }).phase, 'Running');
      const backOff = await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).state.waiting?.reason === 'ImagePullBackOff',
      );
      assert.equal(containerStatus(backOff).state.waiting!.message, 'Back-off pulling image "nginx:broken"');
      // After the (scaled) 10 s back-off it pulls again and fails again.
      await waitForPod(h.store, 'default', 'demo-0', () =>
        eventsFor(h.store, 'default', 'demo-0').some((e) => e.reason === 'Pulling' && e.count >= 2),
      );
      const warnings = eventsFor(h.store, 'default', 'demo-0')
        .filter((e) => e.type === 'Warning')
        .map((e) => e.message);
      assert.ok(warnings.some((m) => m.startsWith('Failed to pull image "nginx:broken": rpc error: code = NotFound')));
      assert.ok(warnings.includes('Error: ErrImagePull'));
      assert.ok(warnings.includes('Error: ImagePullBackOff'));
    } finally {
      h.close();
    }
  });

  test('an image missing from the table fails to pull too', async () => {
    const h = harness(1);
    try {
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:9.9.9');
      await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).state.waiting?.reason === 'ErrImagePull',
      );
    } finally {
      h.close();
    }
  });

  test('an invalid image name is InvalidImageName', async () => {
    const h = harness(1);
    try {
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'NGINX:Bad Tag');
      const pod = await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).state.waiting?.reason === 'InvalidImageName',
      );
      assert.match(containerStatus(pod).state.waiting!.message!, /invalid reference format/);
    } finally {
      h.close();
    }
  });

  test('a crashing image goes into CrashLoopBackOff with restartCount rising', async () => {
    const h = harness(1);
    try {
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:crash');
      const pod = await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).state.waiting?.reason === 'CrashLoopBackOff',
      );
      const s = containerStatus(pod);
      assert.equal(s.lastState.terminated?.exitCode, 1);
      assert.equal(s.lastState.terminated?.reason, 'Error');
      assert.equal(s.ready, false);
      const uid = pod.metadata.uid;
      assert.equal(
        s.state.waiting!.message,
        `back-off 10s restarting failed container=nginx pod=demo-0_default(${uid})`,
      );
      const later = await waitForPod(h.store, 'default', 'demo-0', (p) => containerStatus(p).restartCount >= 4);
      assert.equal(condition(later, 'Ready')?.status, 'False');
      const backOffs = eventsFor(h.store, 'default', 'demo-0').filter((e) => e.reason === 'BackOff');
      assert.equal(backOffs[0]?.message, `Back-off restarting failed container nginx in pod demo-0_default(${uid})`);
      assert.ok(backOffs[0]!.count >= 2, 'the BackOff event repeats with a growing count');
      // A later crash waits longer: the message names the doubled back-off.
      const doubled = await waitForPod(h.store, 'default', 'demo-0', (p) =>
        /back-off 40s/.test(containerStatus(p).state.waiting?.message ?? ''),
      );
      assert.ok(containerStatus(doubled).restartCount >= 3);
    } finally {
      h.close();
    }
  });

  test('rolling a crashing container back to a good image recovers at once', async () => {
    const h = harness(1);
    try {
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:crash');
      await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).state.waiting?.reason === 'CrashLoopBackOff',
      );
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:1.14.2');
      const pod = await waitForPod(h.store, 'default', 'demo-0', (p) => containerStatus(p).ready, 2_000);
      assert.equal(containerStatus(pod).image, 'docker.io/library/nginx:1.14.2');
      assert.equal(condition(pod, 'Ready')?.status, 'True');
    } finally {
      h.close();
    }
  });

  test('a slow image is running but not ready until its readyAfterSeconds', async () => {
    const h = harness(1);
    try {
      patchImage(h.store, 'default', 'demo-0', 'nginx', 'nginx:slow');
      const running = await waitForPod(
        h.store,
        'default',
        'demo-0',
        (p) => containerStatus(p).image.endsWith(':slow') && !!containerStatus(p).state.running,
      );
      assert.equal(containerStatus(running).ready, false);
      await waitForPod(h.store, 'default', 'demo-0', (p) => containerStatus(p).ready);
    } finally {
      h.close();
    }
  });
});

describe('kubelet: readiness gates', () => {
  test('the gate condition False makes Ready False with ReadinessGatesNotReady; True makes it Ready again', async () => {
    const h = harness(1);
    try {
      setCondition(h.store, 'default', 'demo-0', GATE, 'False');
      const drained = await waitForPod(h.store, 'default', 'demo-0', (p) => condition(p, 'Ready')?.status === 'False');
      assert.equal(condition(drained, 'Ready')?.reason, 'ReadinessGatesNotReady');
      assert.equal(
        condition(drained, 'Ready')?.message,
        `the status of pod readiness gate "${GATE}" is not "True", but False`,
      );
      assert.equal(condition(drained, 'ContainersReady')?.status, 'True');
      setCondition(h.store, 'default', 'demo-0', GATE, 'True');
      const back = await waitForPod(h.store, 'default', 'demo-0', (p) => condition(p, 'Ready')?.status === 'True');
      assert.equal(condition(back, 'Ready')?.reason, undefined);
    } finally {
      h.close();
    }
  });

  test('a declared gate without its condition keeps the pod not Ready', () => {
    const fixture = defaultFixture(1);
    fixture.workloads[0]!.readinessGate = { conditionType: GATE, condition: 'absent' };
    const h = harness(1, fixture);
    try {
      const pod = h.store.get('pods', 'default', 'demo-0')!;
      assert.equal(condition(pod, 'Ready')?.status, 'False');
      assert.equal(
        condition(pod, 'Ready')?.message,
        `corresponding condition of pod readiness gate "${GATE}" does not exist.`,
      );
      assert.equal(condition(pod, 'ContainersReady')?.status, 'True');
    } finally {
      h.close();
    }
  });

  test("Ready's lastTransitionTime changes only when its status does", async () => {
    const h = harness(2);
    try {
      const first = condition(h.store.get('pods', 'default', 'demo-0')!, 'Ready')!.lastTransitionTime;
      // Another custom condition changing does not move Ready's transition time. demo-1's gate,
      // changed in the same turn, is reconciled in the same batch: once its Ready has turned, the
      // kubelet has looked at demo-0 too.
      setCondition(h.store, 'default', 'demo-0', 'example.com/other', 'False');
      setCondition(h.store, 'default', 'demo-1', GATE, 'False');
      await waitForPod(h.store, 'default', 'demo-1', (p) => condition(p, 'Ready')?.status === 'False');
      const pod = h.store.get('pods', 'default', 'demo-0')!;
      assert.equal(condition(pod, 'Ready')!.status, 'True');
      assert.equal(condition(pod, 'Ready')!.lastTransitionTime, first);
    } finally {
      h.close();
    }
  });
});

describe('kubelet: deletion and nodes', () => {
  test('a graceful delete stops the containers, reports Succeeded, then removes the pod', async () => {
    const h = harness(1);
    try {
      const pod = h.store.get('pods', 'default', 'demo-0')!;
      const phases: string[] = [];
      const unsubscribe = h.store.subscribe((c) => {
        if (c.resource === 'pods') phases.push(`${c.type} ${(c.object.status as { phase: string }).phase}`);
      });
      const now = new Date();
      // What the API server does on DELETE of a bound pod (docs/sim-api.md: graceful delete).
      h.store.update('pods', {
        ...pod,
        metadata: {
          ...pod.metadata,
          deletionTimestamp: new Date(now.getTime() + 30_000).toISOString().replace(/\.\d+Z$/, 'Z'),
          deletionGracePeriodSeconds: 30,
        },
      });
      await waitForGone(h.store, 'default', 'demo-0');
      unsubscribe();
      assert.deepEqual(phases.slice(-2), ['MODIFIED Succeeded', 'DELETED Succeeded']);
      const killing = eventsFor(h.store, 'default', 'demo-0').find((e) => e.reason === 'Killing');
      assert.equal(killing?.message, 'Stopping container nginx');
      assert.equal(h.kubelet.podCount, 0);
    } finally {
      h.close();
    }
  });

  test('a pod created Pending is pulled and started, and becomes Ready', async () => {
    const h = harness(0);
    try {
      const pod = h.store.create('pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'fresh', namespace: 'default', labels: { app: 'demo' } },
        spec: {
          nodeName: 'sim-node-1',
          containers: [{ name: 'nginx', image: 'nginx:1.25.3' }],
          readinessGates: [{ conditionType: GATE }],
        },
        status: { phase: 'Pending' },
      });
      const waiting = await waitForPod(
        h.store,
        'default',
        'fresh',
        (p) => containerStatus(p).state.waiting?.reason === 'ContainerCreating',
      );
      assert.equal((waiting.status as { phase: string }).phase, 'Pending');
      const running = await waitForPod(h.store, 'default', 'fresh', (p) => containerStatus(p).ready);
      assert.equal(containerStatus(running).restartCount, 0);
      assert.equal((running.status as { phase: string }).phase, 'Running');
      assert.match((running.status as { podIP: string }).podIP, /^10\.\d+\.\d+\.\d+$/);
      // The gate is declared but nobody set it: not Ready.
      assert.equal(condition(running, 'Ready')?.reason, 'ReadinessGatesNotReady');
      setCondition(h.store, 'default', 'fresh', GATE, 'True');
      await waitForPod(h.store, 'default', 'fresh', (p) => condition(p, 'Ready')?.status === 'True');
      assert.equal(pod.metadata.uid, h.store.get('pods', 'default', 'fresh')!.metadata.uid);
    } finally {
      h.close();
    }
  });

  test('a node going NotReady makes its pods not Ready; back to Ready, they recover', async () => {
    const h = harness(3);
    try {
      h.kubelet.setNodeReady('sim-node-1', false);
      const node = h.store.get('nodes', undefined, 'sim-node-1')!;
      const ready = (node.status as { conditions: { type: string; status: string }[] }).conditions.find(
        (c) => c.type === 'Ready',
      );
      assert.equal(ready?.status, 'Unknown');
      assert.ok(
        (node.spec as { taints: { key: string }[] }).taints.some((t) => t.key === 'node.kubernetes.io/unreachable'),
      );
      await waitForPod(h.store, 'default', 'demo-0', (p) => condition(p, 'Ready')?.status === 'False');
      assert.equal(
        condition(h.store.get('pods', 'default', 'demo-1')!, 'Ready')?.status,
        'True',
        'pods on other nodes stay Ready',
      );
      h.kubelet.setNodeReady('sim-node-1', true);
      await waitForPod(h.store, 'default', 'demo-0', (p) => condition(p, 'Ready')?.status === 'True');
      assert.equal((h.store.get('nodes', undefined, 'sim-node-1')!.spec as { taints?: unknown[] }).taints, undefined);
    } finally {
      h.close();
    }
  });

  test('the same seed gives the same container IDs', () => {
    const a = harness(2);
    const b = harness(2);
    try {
      assert.equal(
        containerStatus(a.store.get('pods', 'default', 'demo-1')!).containerID,
        containerStatus(b.store.get('pods', 'default', 'demo-1')!).containerID,
      );
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('scheduler', () => {
  test('a pod created without a node is bound to the least loaded Ready node and started', async () => {
    const h = harness(2);
    const scheduler = new Scheduler(h.store);
    scheduler.start();
    try {
      h.kubelet.setNodeReady('sim-node-3', false);
      h.store.create('pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'loose', namespace: 'default' },
        spec: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] },
        status: { phase: 'Pending' },
      });
      const pod = await waitForPod(h.store, 'default', 'loose', (p) => condition(p, 'Ready')?.status === 'True');
      // sim-node-1 and -2 have one pod each; -3 is NotReady; ties go to the first.
      assert.equal((pod.spec as { nodeName: string }).nodeName, 'sim-node-1');
      assert.equal(condition(pod, 'PodScheduled')?.status, 'True');
      assert.ok(
        eventsFor(h.store, 'default', 'loose').some(
          (e) => e.reason === 'Scheduled' && e.message === 'Successfully assigned default/loose to sim-node-1',
        ),
      );
    } finally {
      scheduler.stop();
      h.close();
    }
  });

  test('a pod no node fits stays Pending, Unschedulable', async () => {
    const h = harness(1);
    const scheduler = new Scheduler(h.store);
    scheduler.start();
    try {
      h.store.create('pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'picky', namespace: 'default' },
        spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] },
        status: { phase: 'Pending' },
      });
      const pod = await waitForPod(
        h.store,
        'default',
        'picky',
        (p) => condition(p, 'PodScheduled')?.status === 'False',
      );
      assert.equal(condition(pod, 'PodScheduled')?.reason, 'Unschedulable');
      assert.equal((pod.spec as { nodeName?: string }).nodeName, undefined);
    } finally {
      scheduler.stop();
      h.close();
    }
  });
});

describe('kubelet: work per change', () => {
  test('a change to one pod among 2,000 makes exactly one status write, to that pod', async () => {
    const h = harness(2_000);
    try {
      const changes: string[] = [];
      const unsubscribe = h.store.subscribe((c) => changes.push(`${c.type} ${c.resource} ${c.object.metadata.name}`));
      setCondition(h.store, 'default', 'demo-1234', GATE, 'False');
      await waitForPod(h.store, 'default', 'demo-1234', (p) => condition(p, 'Ready')?.status === 'False');
      // A second change, reconciled after anything the first one set off: once it is seen, any
      // extra write the first change caused would have been made.
      setCondition(h.store, 'default', 'demo-7', GATE, 'False');
      await waitForPod(h.store, 'default', 'demo-7', (p) => condition(p, 'Ready')?.status === 'False');
      unsubscribe();
      assert.deepEqual(changes, [
        'MODIFIED pods demo-1234',
        'MODIFIED pods demo-1234',
        'MODIFIED pods demo-7',
        'MODIFIED pods demo-7',
      ]);
    } finally {
      h.close();
    }
  });
});
