import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { containerCompletion, podCompletion } from '../../../src/inplace/completion.js';
import { containerStatus } from '../../../src/inplace/podView.js';
import type { ContainerRecord, InPlaceState } from '../../../src/inplace/state.js';
import { digestFor, imageIDOf, makePod, NEW, OLD, RETAG, type ContainerOpts } from './fixtures.js';

/** The record the patch wrote for a container that ran OLD as containerd://nginx-0, never restarted. */
const rec = (toImage: string, extra: Partial<ContainerRecord> = {}): ContainerRecord => ({
  fromImage: OLD,
  fromImageID: imageIDOf(OLD),
  fromContainerID: 'containerd://nginx-0',
  fromRestartCount: 0,
  toImage,
  ...extra,
});

/** Status of container `nginx` after the patch asked for `spec`. */
function check(spec: string, c: Omit<ContainerOpts, 'name'>, r: ContainerRecord = rec(spec)) {
  const pod = makePod({ containers: [{ name: 'nginx', specImage: spec, ...c }] });
  return containerCompletion('nginx', containerStatus(pod, 'nginx'), r);
}
const replaced = { containerID: 'containerd://nginx-1', restartCount: 1 };

describe('containerCompletion: upgrade', () => {
  test('right after the patch the status still shows the old container: waiting', () => {
    const r = check(NEW, { image: OLD });
    assert.equal(r.status, 'waiting');
    assert.equal(r.reason, 'NotRestarted');
  });
  test('new imageID, running and ready: done', () => {
    assert.deepEqual(check(NEW, { image: NEW, ...replaced }), { name: 'nginx', status: 'done' });
  });
  test('new imageID, running, not ready: waiting NotReady', () => {
    assert.equal(check(NEW, { image: NEW, ...replaced, ready: false }).reason, 'NotReady');
  });
  test('old container killed, new one being created: waiting with the kubelet reason', () => {
    const r = check(NEW, { image: NEW, ...replaced, containerID: '', waiting: { reason: 'ContainerCreating' } });
    assert.equal(r.status, 'waiting');
    assert.equal(r.reason, 'ContainerCreating');
  });
  test('pull failure of the new image: failed with the kubelet message', () => {
    const r = check(
      'nginx:broken',
      {
        image: 'nginx:broken',
        containerID: '',
        imageID: '',
        waiting: { reason: 'ErrImagePull', message: 'rpc error: not found' },
      },
      rec('nginx:broken'),
    );
    assert.deepEqual(r, { name: 'nginx', status: 'failed', reason: 'ErrImagePull', message: 'rpc error: not found' });
  });
  test('ImagePullBackOff and InvalidImageName fail too', () => {
    for (const reason of [
      'ImagePullBackOff',
      'InvalidImageName',
      'CreateContainerConfigError',
      'CreateContainerError',
    ]) {
      const r = check(
        'nginx:broken',
        { image: 'nginx:broken', imageID: '', waiting: { reason, message: `m ${reason}` } },
        rec('nginx:broken'),
      );
      assert.equal(r.status, 'failed', reason);
      assert.equal(r.reason, reason);
      assert.equal(r.message, `m ${reason}`);
    }
  });
  test('a failing pull keeps the old image and ID in the status; the message naming the target makes it a failure', () => {
    const message =
      'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:broken": not found';
    const r = check(
      'nginx:broken',
      { image: OLD, imageID: imageIDOf(OLD), waiting: { reason: 'ErrImagePull', message } },
      rec('nginx:broken'),
    );
    assert.equal(r.status, 'failed');
    assert.equal(r.reason, 'ErrImagePull');
  });
  test('ErrImageNeverPull (pull policy Never, image absent) fails at once', () => {
    const message = 'Container image "nginx:1.25.3" is not present with pull policy of Never';
    const r = check(NEW, { image: OLD, imageID: imageIDOf(OLD), waiting: { reason: 'ErrImageNeverPull', message } });
    assert.equal(r.status, 'failed');
    assert.equal(r.reason, 'ErrImageNeverPull');
  });
  test("a rollback right after its patch still sees the broken image's back-off: not its own failure, waiting", () => {
    const back = rec(OLD, {
      fromImage: 'nginx:broken',
      toImageID: imageIDOf(OLD),
      originContainerID: 'containerd://nginx-0',
    });
    const r = check(
      OLD,
      {
        image: OLD,
        imageID: imageIDOf(OLD),
        waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nginx:broken"' },
      },
      back,
    );
    assert.equal(r.status, 'waiting');
  });
  test('the OLD container was already crash-looping before the patch: its reason is stale, waiting', () => {
    const r = check(NEW, {
      image: OLD,
      imageID: imageIDOf(OLD),
      waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' },
    });
    assert.equal(r.status, 'waiting');
    assert.equal(r.reason, 'CrashLoopBackOff');
  });
  test('the new container exited once, before any back-off: waiting, not yet failed', () => {
    const r = check(NEW, { image: NEW, ...replaced, terminated: { exitCode: 1, reason: 'Error' } });
    assert.equal(r.status, 'waiting');
    assert.equal(r.reason, 'Terminated');
    assert.match(r.message ?? '', /exit.*code 1/);
  });
  test('the new container restarted after crashing and is not ready: waiting, says so', () => {
    const r = check(NEW, {
      image: NEW,
      containerID: 'containerd://nginx-2',
      restartCount: 2,
      ready: false,
      lastTerminated: { exitCode: 137, containerID: 'containerd://nginx-1' },
    });
    assert.equal(r.status, 'waiting');
    assert.match(r.message ?? '', /restarted 1 time\(s\) since the patch, last exit code 137/);
  });
  test('the new container in CrashLoopBackOff: failed with the kubelet message', () => {
    const r = check(NEW, {
      image: NEW,
      imageID: imageIDOf(NEW),
      containerID: 'containerd://nginx-2',
      restartCount: 2,
      waiting: {
        reason: 'CrashLoopBackOff',
        message: 'back-off 10s restarting failed container=nginx pod=web-0_default(uid)',
      },
    });
    assert.equal(r.status, 'failed');
    assert.equal(r.reason, 'CrashLoopBackOff');
    assert.match(r.message ?? '', /back-off 10s/);
  });
  test('CrashLoopBackOff: a crash of the target since the patch fails, a back-off before any start waits', () => {
    const backOff = { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=nginx pod=web-0' };
    // The rollback of NEW → nginx:broken: the NEW container (nginx-1, restartCount 1) was killed for
    // the broken image, whose pull failed; the rollback restores NEW, whose spec the kubelet started
    // seconds ago and still holds in back-off.
    const restoreNew = rec(NEW, {
      fromImage: 'nginx:broken',
      fromImageID: imageIDOf(NEW),
      fromContainerID: 'containerd://nginx-1',
      fromRestartCount: 1,
      toImageID: imageIDOf(NEW),
      originContainerID: 'containerd://nginx-1',
    });
    const killed = { exitCode: 137, reason: 'Error', containerID: 'containerd://nginx-1' };
    const cases: { what: string; c: Omit<ContainerOpts, 'name'>; r: ContainerRecord; want: string }[] = [
      {
        what: 'rollback, back-off right after the patch, status on the killed container',
        c: {
          image: NEW,
          imageID: imageIDOf(NEW),
          containerID: 'containerd://nginx-1',
          restartCount: 1,
          waiting: backOff,
          lastTerminated: killed,
        },
        r: restoreNew,
        want: 'waiting',
      },
      {
        what: 'upgrade, back-off before the first start of the target, status on the old container',
        c: {
          image: OLD,
          imageID: imageIDOf(OLD),
          waiting: backOff,
          lastTerminated: { exitCode: 0, reason: 'Completed' },
        },
        r: rec(NEW),
        want: 'waiting',
      },
      {
        what: 'same, the runtime reporting the spec image on the killed container',
        c: {
          image: NEW,
          imageID: imageIDOf(OLD),
          waiting: backOff,
          lastTerminated: { exitCode: 0, reason: 'Completed' },
        },
        r: rec(NEW),
        want: 'waiting',
      },
      {
        what: 'rollback, the restored image ran and exited non-zero since the patch, then back-off',
        c: {
          image: NEW,
          imageID: imageIDOf(NEW),
          containerID: 'containerd://nginx-2',
          restartCount: 2,
          waiting: backOff,
          lastTerminated: { exitCode: 1, reason: 'Error', containerID: 'containerd://nginx-2' },
        },
        r: restoreNew,
        want: 'failed',
      },
      {
        what: 'upgrade, the target ran and exited non-zero since the patch, then back-off',
        c: {
          image: NEW,
          ...replaced,
          waiting: backOff,
          lastTerminated: { exitCode: 1, reason: 'Error', containerID: 'containerd://nginx-1' },
        },
        r: rec(NEW),
        want: 'failed',
      },
      {
        what: 'upgrade, the crash seen only through restartCount',
        c: { image: NEW, restartCount: 1, waiting: backOff, lastTerminated: { exitCode: 1, reason: 'Error' } },
        r: rec(NEW),
        want: 'failed',
      },
      {
        what: 'a container of the old image restarted since the patch was recorded, then back-off',
        c: {
          image: OLD,
          imageID: imageIDOf(OLD),
          ...replaced,
          waiting: backOff,
          lastTerminated: { exitCode: 1, reason: 'Error' },
        },
        r: rec(NEW),
        want: 'waiting',
      },
    ];
    for (const k of cases) {
      const got = check(k.r.toImage, k.c, k.r);
      assert.equal(got.status, k.want, k.what);
      assert.equal(got.reason, 'CrashLoopBackOff', k.what);
    }
  });
  test('no status for the container yet: waiting', () => {
    const pod = makePod({ containers: [{ name: 'nginx', image: NEW, noStatus: true }] });
    assert.equal(containerCompletion('nginx', containerStatus(pod, 'nginx'), rec(NEW)).reason, 'NoStatus');
  });
});

describe('containerCompletion: same-digest retag', () => {
  test('same imageID and no restart: waiting', () => {
    assert.equal(check(RETAG, { image: OLD }, rec(RETAG)).status, 'waiting');
  });
  test('same imageID, restarted, reports the retag: done', () => {
    assert.equal(check(RETAG, { image: RETAG, ...replaced }, rec(RETAG)).status, 'done');
  });
  test('same imageID, restarted, but reports the old tag: waiting', () => {
    assert.equal(
      check(RETAG, { image: RETAG, statusImage: 'docker.io/library/nginx:1.14.2', ...replaced }, rec(RETAG)).status,
      'waiting',
    );
  });
  test('status already names the retag (a runtime showing another tag of the same image) but no restart: waiting', () => {
    assert.equal(
      check(RETAG, { image: OLD, statusImage: 'docker.io/library/nginx:1.14.2-retag' }, rec(RETAG)).status,
      'waiting',
    );
  });
  test('restart seen only through restartCount (same containerID): done', () => {
    assert.equal(check(RETAG, { image: RETAG, restartCount: 1 }, rec(RETAG)).status, 'done');
  });
});

describe('containerCompletion: digest-pinned target', () => {
  const pinned = `nginx@${digestFor(NEW)}`;
  test('the pinned digest runs: done', () => {
    assert.equal(check(pinned, { image: pinned, imageID: imageIDOf(NEW), ...replaced }, rec(pinned)).status, 'done');
  });
  test('another digest runs: failed DigestMismatch', () => {
    const r = check(pinned, { image: pinned, imageID: imageIDOf('nginx:moved'), ...replaced }, rec(pinned));
    assert.equal(r.status, 'failed');
    assert.equal(r.reason, 'DigestMismatch');
    assert.match(r.message ?? '', /pinned to sha256:b+/);
  });
});

describe('containerCompletion: rollback record', () => {
  // The upgrade ran NEW as nginx-1; the rollback wants OLD's image ID back.
  const rb = (extra: Partial<ContainerRecord> = {}): ContainerRecord => ({
    fromImage: NEW,
    fromImageID: imageIDOf(NEW),
    fromContainerID: 'containerd://nginx-1',
    fromRestartCount: 1,
    toImage: OLD,
    toImageID: imageIDOf(OLD),
    originContainerID: 'containerd://nginx-0',
    ...extra,
  });
  test('back on the recorded image ID: done', () => {
    assert.equal(check(OLD, { image: OLD, containerID: 'containerd://nginx-2', restartCount: 2 }, rb()).status, 'done');
  });
  test('still on the new image: waiting', () => {
    assert.equal(
      check(OLD, { image: NEW, containerID: 'containerd://nginx-1', restartCount: 1 }, rb()).status,
      'waiting',
    );
  });
  test('the old tag now resolves to another digest: failed DigestMismatch', () => {
    const r = check(
      OLD,
      { image: OLD, imageID: imageIDOf('nginx:moved'), containerID: 'containerd://nginx-2', restartCount: 2 },
      rb(),
    );
    assert.equal(r.reason, 'DigestMismatch');
  });
  test('the kubelet never replaced the original container: done without a restart', () => {
    const r = check(
      OLD,
      { image: OLD, containerID: 'containerd://nginx-0', restartCount: 0 },
      rb({ fromImageID: imageIDOf(OLD), fromContainerID: 'containerd://nginx-0', fromRestartCount: 0 }),
    );
    assert.equal(r.status, 'done');
  });
  // The upgrade's patch came while its kubelet was stopped (or still pulling): the original
  // container was killed, NEW's pull was under way. The rollback's patch lands before the kubelet
  // ends that sync, so it starts NEW's container anyway and kills it in its next sync for OLD's.
  test("a container of the spec the rollback replaced starts after the rollback's patch: waiting, then done on OLD", () => {
    const killed = rb({ fromImageID: imageIDOf(OLD), fromContainerID: 'containerd://nginx-0', fromRestartCount: 0 });
    const stale = check(OLD, { image: NEW, containerID: 'containerd://nginx-1', restartCount: 1 }, killed);
    assert.equal(stale.status, 'waiting', JSON.stringify(stale));
    assert.equal(stale.reason, 'ReplacedSpecRuns');
    assert.match(stale.message ?? '', /nginx:1\.25\.3, the spec the patch replaced/);
    const back = check(OLD, { image: OLD, containerID: 'containerd://nginx-2', restartCount: 2 }, killed);
    assert.equal(back.status, 'done');
    // A container that reports the rollback's own tag with another digest is still a mismatch.
    const moved = check(
      OLD,
      { image: OLD, imageID: imageIDOf('nginx:moved'), containerID: 'containerd://nginx-2', restartCount: 2 },
      killed,
    );
    assert.equal(moved.reason, 'DigestMismatch');
  });
  test('rollback of a same-digest retag needs the restart', () => {
    const r0 = rb({ fromImage: RETAG, fromImageID: imageIDOf(RETAG) });
    assert.equal(
      check(OLD, { image: RETAG, containerID: 'containerd://nginx-1', restartCount: 1 }, r0).status,
      'waiting',
    );
    assert.equal(check(OLD, { image: OLD, containerID: 'containerd://nginx-2', restartCount: 2 }, r0).status, 'done');
  });
});

test('upgrade: a container of the spec the patch replaced (started late by the kubelet) is not the target', () => {
  // The spec named nginx:crash (pull under way, OLD's container still reported) when kwave patched it to NEW.
  const r0 = rec(NEW, { fromImage: 'nginx:crash' });
  const stale = check(NEW, { image: 'nginx:crash', containerID: 'containerd://nginx-1', restartCount: 1 }, r0);
  assert.equal(stale.status, 'waiting');
  assert.equal(stale.reason, 'ReplacedSpecRuns');
  assert.equal(check(NEW, { image: NEW, containerID: 'containerd://nginx-2', restartCount: 2 }, r0).status, 'done');
});

test('no recorded image ID (never started): only the target image counts', () => {
  const r0 = rec(NEW, { fromImageID: '', fromContainerID: '' });
  assert.equal(check(NEW, { image: OLD, containerID: 'containerd://nginx-1' }, r0).status, 'waiting');
  assert.equal(check(NEW, { image: NEW, containerID: 'containerd://nginx-1' }, r0).status, 'done');
});

describe('podCompletion', () => {
  const state = (containers: Record<string, ContainerRecord>): InPlaceState => ({
    plan: 'p',
    revision: 'r',
    wave: 1,
    startedAt: '2025-01-01T00:00:00Z',
    direction: 'upgrade',
    containers,
  });
  const sidecarRec: ContainerRecord = {
    fromImage: 'envoy:1.29',
    fromImageID: imageIDOf('envoy:1.29'),
    fromContainerID: 'containerd://sidecar-0',
    fromRestartCount: 0,
    toImage: 'envoy:1.30',
  };

  test('two changed containers: done only when both are', () => {
    const s = state({ nginx: rec(NEW), sidecar: sidecarRec });
    const half = makePod({
      containers: [
        { name: 'nginx', image: NEW, ...replaced },
        { name: 'sidecar', image: 'envoy:1.29', specImage: 'envoy:1.30' },
      ],
    });
    const c = podCompletion(half, s);
    assert.equal(c.status, 'waiting');
    assert.match(c.message ?? '', /container sidecar/);
    const both = makePod({
      containers: [
        { name: 'nginx', image: NEW, ...replaced },
        { name: 'sidecar', image: 'envoy:1.30', containerID: 'containerd://sidecar-1', restartCount: 1 },
      ],
    });
    assert.equal(podCompletion(both, s).status, 'done');
  });
  test('one failed container fails the pod, named', () => {
    const s = state({ nginx: rec(NEW), sidecar: sidecarRec });
    const pod = makePod({
      containers: [
        { name: 'nginx', image: NEW, ...replaced },
        {
          name: 'sidecar',
          image: 'envoy:1.30',
          imageID: '',
          waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "envoy:1.30"' },
        },
      ],
    });
    const c = podCompletion(pod, s);
    assert.equal(c.status, 'failed');
    assert.equal(c.reason, 'ImagePullBackOff');
    assert.equal(c.message, 'container sidecar: Back-off pulling image "envoy:1.30"');
  });
  test('containers not in the record are not looked at', () => {
    const s = state({ nginx: rec(NEW) });
    const pod = makePod({
      containers: [
        { name: 'nginx', image: NEW, ...replaced },
        { name: 'sidecar', image: 'envoy:1.29', waiting: { reason: 'CrashLoopBackOff' } },
      ],
    });
    assert.equal(podCompletion(pod, s).status, 'done');
  });
});
