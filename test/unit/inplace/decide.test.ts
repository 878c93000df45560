import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, gateMessage, gateOwner, GATE_CLOSED_REASON, type DecideContext } from '../../../src/inplace/decide.js';
import { decodeState, STATE_ANNOTATION, type InPlaceState } from '../../../src/inplace/state.js';
import {
  GATE,
  imageIDOf,
  makePod,
  NEW,
  OLD,
  RETAG,
  T0,
  UPGRADE_CTX,
  expectKind,
  type ContainerOpts,
  type PodOpts,
} from './fixtures.js';

const ctx = UPGRADE_CTX;
const rollbackCtx: DecideContext = { ...ctx, direction: 'rollback' };

/** Gate closed by this flow `agoMs` ago. */
const closedByUs = (agoMs: number, c: DecideContext = ctx): Partial<PodOpts> => ({
  gate: 'False',
  gateReason: GATE_CLOSED_REASON,
  gateMessage: gateMessage(c.direction, c.plan, c.revision),
  gateSince: T0 - agoMs,
});

/** The state the upgrade patch of web-0 wrote `agoMs` ago. */
const upgraded = (agoMs: number, over: Partial<InPlaceState> = {}): InPlaceState => ({
  plan: 'web',
  revision: 'r1',
  wave: 2,
  startedAt: new Date(T0 - agoMs).toISOString(),
  direction: 'upgrade',
  containers: {
    nginx: {
      fromImage: OLD,
      fromImageID: imageIDOf(OLD),
      fromContainerID: 'containerd://nginx-0',
      fromRestartCount: 0,
      toImage: NEW,
    },
  },
  ...over,
});
const newContainer = { name: 'nginx', image: NEW, containerID: 'containerd://nginx-1', restartCount: 1 };
const oldContainerPatched = { name: 'nginx', image: OLD, specImage: NEW };

describe('decide: upgrade, before the patch', () => {
  test('no pod: vanished', () => assert.equal(expectKind(decide(undefined, ctx), 'vanished').reason, 'Gone'));
  test('another uid: vanished (replaced)', () => {
    assert.equal(expectKind(decide(makePod({ uid: 'new' }), { ...ctx, uid: 'old' }), 'vanished').reason, 'Replaced');
  });
  test('being deleted: vanished', () =>
    assert.equal(expectKind(decide(makePod({ deleting: true }), ctx), 'vanished').reason, 'Terminating'));
  test('a named container is missing: refuse', () => {
    const s = expectKind(decide(makePod({ containers: [{ name: 'app', image: OLD }] }), ctx), 'refused');
    assert.equal(s.reason, 'ContainerMissing');
    assert.match(s.message, /nginx/);
  });
  test('gate required but not declared: refuse', () => {
    assert.equal(
      expectKind(decide(makePod({ declaresGate: false, gate: null }), ctx), 'refused').reason,
      'GateMissing',
    );
  });
  test('gate not declared but already at target: skip, not refuse', () => {
    expectKind(
      decide(makePod({ declaresGate: false, gate: null, containers: [{ name: 'nginx', image: NEW }] }), ctx),
      'skipped',
    );
  });
  test('already at target: skip', () => {
    assert.equal(
      expectKind(decide(makePod({ containers: [{ name: 'nginx', image: NEW }] }), ctx), 'skipped').reason,
      'AtTarget',
    );
  });
  test('serving pod: close the gate and turn it not Ready in one write, guarded, naming the flow', () => {
    const s = expectKind(decide(makePod({ rv: '42' }), ctx), 'close-gate');
    assert.deepEqual(s.body, {
      metadata: { resourceVersion: '42' },
      status: {
        conditions: [
          {
            type: GATE,
            status: 'False',
            reason: 'InPlaceUpdate',
            message: 'kwave: upgrade by plan web (revision r1)',
            lastTransitionTime: '2025-01-01T00:00:00Z',
          }, // T0 in whole seconds, as metav1.Time keeps it
          {
            type: 'Ready',
            status: 'False',
            reason: 'ReadinessGatesNotReady',
            message: `kwave closed the readiness gate "${GATE}"`,
            lastTransitionTime: '2025-01-01T00:00:00Z',
          },
        ],
      },
    });
  });
  test('gate declared, condition never set: close the gate', () =>
    void expectKind(decide(makePod({ gate: null }), ctx), 'close-gate'));
  test('gate Unknown: close the gate', () => void expectKind(decide(makePod({ gate: 'Unknown' }), ctx), 'close-gate'));
  test('gate closed, pod still Ready: wait for the kubelet, podTimeout from the end of the stored second', () => {
    const s = expectKind(decide(makePod({ ...closedByUs(1_000), ready: true }), ctx), 'wait-drain');
    assert.equal(s.reason, 'StillReady');
    assert.equal(s.retryAfterMs, 300_000);
  });
  test('gate closed, still Ready a whole podTimeout after the stored second ended: failed DrainTimeout, never up to a second early', () => {
    // Stored as T0 - 300 s (cut to the second): the close may have been as late as T0 - 299.001 s.
    assert.equal(
      expectKind(decide(makePod({ ...closedByUs(300_000), ready: true }), ctx), 'wait-drain').reason,
      'StillReady',
    );
    assert.equal(
      expectKind(decide(makePod({ ...closedByUs(300_000), ready: true }), { ...ctx, nowMs: T0 + 999 }), 'wait-drain')
        .reason,
      'StillReady',
    );
    assert.equal(
      expectKind(decide(makePod({ ...closedByUs(300_000), ready: true }), { ...ctx, nowMs: T0 + 1_000 }), 'failed')
        .reason,
      'DrainTimeout',
    );
    // A close time with a fraction was not cut: it counts as it is.
    assert.equal(
      expectKind(decide(makePod({ ...closedByUs(300_500), ready: true }), ctx), 'failed').reason,
      'DrainTimeout',
    );
  });
  test('gate closed 2 s ago (a whole second, as the server stores it), drain 5 s: wait 4 s more, from the end of that second', () => {
    const s = expectKind(decide(makePod({ ...closedByUs(2_000) }), ctx), 'wait-drain');
    assert.equal(s.reason, 'Draining');
    assert.equal(s.retryAfterMs, 4_000);
  });
  test('the server cut the close time to …:00Z, the close happened at …:00.9: the drain is never short', () => {
    // Closed at T0 - 4.1 s, stored as T0 - 5 s: 5 s of drain end at T0 + 0.9 s at the earliest.
    expectKind(decide(makePod({ ...closedByUs(5_000) }), ctx), 'wait-drain');
    expectKind(decide(makePod({ ...closedByUs(5_000) }), { ...ctx, nowMs: T0 + 999 }), 'wait-drain');
    expectKind(decide(makePod({ ...closedByUs(5_000) }), { ...ctx, nowMs: T0 + 1_000 }), 'patch');
  });
  test('closed by this run and seen not Ready: the drain counts from that sight, not from the stored second', () => {
    // Stored T0 - 2 s: the stored rule would wait 4 s more; seen not Ready 1.2 s ago, 3.8 s are left.
    const s = expectKind(decide(makePod({ ...closedByUs(2_000) }), { ...ctx, notReadySeenForMs: 1_200 }), 'wait-drain');
    assert.equal(s.reason, 'Draining');
    assert.equal(s.retryAfterMs, 3_800);
    expectKind(decide(makePod({ ...closedByUs(2_000) }), { ...ctx, notReadySeenForMs: 5_000 }), 'patch');
    // Seen just now: a whole drain, even if the stored time says it is over.
    expectKind(decide(makePod({ ...closedByUs(60_000) }), { ...ctx, notReadySeenForMs: 0 }), 'wait-drain');
  });
  test('a close time with a fraction (not cut by a server) counts as it is', () => {
    expectKind(decide(makePod({ ...closedByUs(4_500) }), { ...ctx, nowMs: T0 + 499 }), 'wait-drain');
    expectKind(decide(makePod({ ...closedByUs(4_500) }), { ...ctx, nowMs: T0 + 500 }), 'patch');
  });
  test('drained: patch the image and the state, guarded by resourceVersion', () => {
    const s = expectKind(decide(makePod({ ...closedByUs(6_000), rv: '77' }), ctx), 'patch');
    assert.deepEqual(s.body.spec, { containers: [{ name: 'nginx', image: NEW }] });
    assert.equal(s.body.metadata.resourceVersion, '77');
    const decoded = decodeState(s.body.metadata.annotations[STATE_ANNOTATION] as string);
    assert.deepEqual(decoded, { ok: true, state: s.state });
    assert.deepEqual(s.state, upgraded(0));
  });
  test('drain 0 with a stringly-timed pod (raw watch JSON): patch at once', () => {
    expectKind(decide(makePod({ ...closedByUs(0), stringTimes: true }), { ...ctx, drainMs: 0 }), 'patch');
  });
  test('gate closed by nobody known (no kwave message), no state: drained, patch', () => {
    expectKind(decide(makePod({ gate: 'False', gateSince: T0 - 60_000 }), ctx), 'patch');
  });
  test('gate closed but time unknown: the drain counts as served', () => {
    const pod = makePod({ ...closedByUs(0) });
    delete pod.status!.conditions![0]!.lastTransitionTime;
    expectKind(decide(pod, ctx), 'patch');
  });
  test('two containers, one already at target: the patch names only the other', () => {
    const two = {
      ...ctx,
      containers: [
        { name: 'nginx', image: NEW },
        { name: 'sidecar', image: 'envoy:1.30' },
      ],
    };
    const pod = makePod({
      ...closedByUs(10_000),
      containers: [
        { name: 'nginx', image: OLD },
        { name: 'sidecar', image: 'envoy:1.30' },
      ],
    });
    const s = expectKind(decide(pod, two), 'patch');
    assert.deepEqual(s.body.spec?.containers, [{ name: 'nginx', image: NEW }]);
    assert.deepEqual(Object.keys(s.state.containers), ['nginx']);
  });
  test('gate closed by this flow but already at target (nothing to patch): reopen', () => {
    const s = expectKind(
      decide(makePod({ ...closedByUs(10_000), containers: [{ name: 'nginx', image: NEW }], rv: '9' }), ctx),
      'open-gate',
    );
    assert.equal(s.body.status.conditions[0]?.status, 'True');
    assert.equal(s.body.status.conditions[0]?.reason, 'InPlaceUpdateComplete');
    assert.equal(s.body.metadata.resourceVersion, '9');
  });
  test('gate held by another plan: foreign', () => {
    const s = expectKind(decide(makePod({ ...closedByUs(1_000, { ...ctx, plan: 'other' }) }), ctx), 'foreign');
    assert.equal(s.reason, 'OtherRollout');
    assert.match(s.message, /plan other/);
  });
  test('gate held by another revision of this plan: foreign', () => {
    expectKind(decide(makePod({ ...closedByUs(1_000, { ...ctx, revision: 'r0' }) }), ctx), 'foreign');
  });
  test('gate closed and the pod carries another rollout state: foreign, with that state', () => {
    const other = upgraded(1_000, { plan: 'other' });
    const s = expectKind(
      decide(makePod({ gate: 'False', state: other, containers: [oldContainerPatched] }), ctx),
      'foreign',
    );
    assert.deepEqual(s.state, other);
  });
  test('gate closed and the state is unreadable: foreign MalformedState', () => {
    assert.equal(
      expectKind(decide(makePod({ gate: 'False', state: '{oops' }), ctx), 'foreign').reason,
      'MalformedState',
    );
  });
  test('gate open and the state is unreadable: start (the patch overwrites it)', () => {
    expectKind(decide(makePod({ state: '{oops' }), ctx), 'close-gate');
  });
  test('gate closed by this flow although another plan finished here before: ours, patch', () => {
    const before = upgraded(86_400_000, {
      plan: 'older',
      containers: {
        nginx: { fromImage: 'nginx:1.0', fromImageID: 'x', fromContainerID: 'y', fromRestartCount: 0, toImage: OLD },
      },
    });
    expectKind(decide(makePod({ ...closedByUs(10_000), state: before }), ctx), 'patch');
  });
  test('spec already names the target but the old container runs, no state: foreign UpdatingElsewhere', () => {
    assert.equal(
      expectKind(decide(makePod({ containers: [oldContainerPatched] }), ctx), 'foreign').reason,
      'UpdatingElsewhere',
    );
  });
});

describe('decide: upgrade, after the patch (resume from the pod alone)', () => {
  const patched = (agoMs: number, o: Partial<PodOpts>): PodOpts => ({
    ...closedByUs(agoMs + 5_000),
    state: upgraded(agoMs),
    ...o,
  });

  test('status still shows the old container: wait, with the time left', () => {
    const s = expectKind(decide(makePod(patched(1_000, { containers: [oldContainerPatched] })), ctx), 'wait-complete');
    assert.equal(s.retryAfterMs, 299_000);
    assert.equal(s.completion.status, 'waiting');
  });
  test('never completes within podTimeout: failed Timeout', () => {
    const s = expectKind(decide(makePod(patched(300_000, { containers: [oldContainerPatched] })), ctx), 'failed');
    assert.equal(s.reason, 'Timeout');
    assert.match(s.message, /podTimeout 5m/);
  });
  /** The new container, crashed and in the kubelet's back-off. */
  const crashLooping = {
    ...newContainer,
    restartCount: 2,
    containerID: 'containerd://nginx-2',
    imageID: imageIDOf(NEW),
    waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' },
  };
  test('crash loop of the new container: failed with the kubelet reason', () => {
    const pod = makePod(
      patched(20_000, {
        containers: [crashLooping],
      }),
    );
    const s = expectKind(decide(pod, ctx), 'failed');
    assert.equal(s.reason, 'CrashLoopBackOff');
    assert.equal(s.message, 'container nginx: back-off 10s');
  });
  test('the proven container crashed after the gate opened: done once it served minReadySeconds with the gate open, else failed', () => {
    // Chaos (seed 2078500064): a run upgraded demo-4 and was killed; its container crashed a
    // second after the gate opened, and the next run met the kubelet's back-off and failed it.
    const crashedAfterGate = (finishedAt: number) =>
      makePod({
        state: upgraded(60_000),
        gate: 'True',
        gateSince: T0 - 30_000,
        ready: false,
        containers: [{ ...crashLooping, lastTerminated: { exitCode: 1, startedAt: T0 - 31_000, finishedAt } }],
      });
    const crashedAt = crashedAfterGate(T0 - 30_000); // the second the gate opened
    expectKind(decide(crashedAt, { ...ctx, minReadyMs: 0 }), 'done');
    assert.equal(expectKind(decide(crashedAt, ctx), 'failed').reason, 'CrashLoopBackOff', 'within minReadySeconds 10');
    assert.match(expectKind(decide(crashedAfterGate(T0 - 19_000), ctx), 'done').message, /crashed since/);
    assert.equal(expectKind(decide(crashedAfterGate(T0 - 20_000), ctx), 'failed').reason, 'CrashLoopBackOff');
  });
  test('new image running and ready, gate still closed: open the gate', () => {
    const s = expectKind(decide(makePod(patched(3_000, { containers: [newContainer], rv: '88' })), ctx), 'open-gate');
    assert.equal(s.body.metadata.resourceVersion, '88');
  });
  test('complete after the deadline (found by a late run): still open the gate', () => {
    expectKind(decide(makePod(patched(3_600_000, { containers: [newContainer] })), ctx), 'open-gate');
  });
  test('gate open, pod not yet Ready: wait-ready', () => {
    const pod = makePod({
      state: upgraded(3_000),
      gate: 'True',
      gateSince: T0 - 1_000,
      ready: false,
      containers: [{ ...newContainer, startedAt: T0 - 2_000 }],
    });
    expectKind(decide(pod, ctx), 'wait-ready');
  });
  test('Ready for 3 s (whole seconds, as stored) of minReadySeconds 10: wait 8 s, from the end of that second', () => {
    const pod = makePod({
      state: upgraded(5_000),
      gate: 'True',
      gateSince: T0 - 3_000,
      readySince: T0 - 3_000,
      containers: [{ ...newContainer, startedAt: T0 - 4_000 }],
    });
    assert.equal(expectKind(decide(pod, ctx), 'wait-ready').retryAfterMs, 8_000);
  });
  test('minReadySeconds 0: done as soon as Ready, the stored second does not add a wait', () => {
    const pod = makePod({
      state: upgraded(5_000),
      gate: 'True',
      gateSince: T0,
      readySince: T0,
      containers: [{ ...newContainer, startedAt: T0 }],
    });
    expectKind(decide(pod, { ...ctx, minReadyMs: 0 }), 'done');
  });
  test('Ready long enough: done', () => {
    const pod = makePod({
      state: upgraded(60_000),
      gate: 'True',
      gateSince: T0 - 20_000,
      readySince: T0 - 19_000,
      containers: [{ ...newContainer, startedAt: T0 - 50_000 }],
    });
    expectKind(decide(pod, ctx), 'done');
  });
  test('not Ready past podTimeout, gate opened long ago: failed Timeout', () => {
    const pod = makePod({
      state: upgraded(400_000),
      gate: 'True',
      gateSince: T0 - 200_000,
      ready: false,
      containers: [newContainer],
    });
    assert.equal(expectKind(decide(pod, ctx), 'failed').reason, 'Timeout');
  });
  test('not Ready past podTimeout, but the gate just opened (late resume): grace, wait', () => {
    const pod = makePod({
      state: upgraded(400_000),
      gate: 'True',
      gateSince: T0 - 1_000,
      ready: false,
      containers: [newContainer],
    });
    // Opened at T0 - 1 s as stored (cut to the second): the 30 s of grace run from T0, the end of that second.
    assert.equal(expectKind(decide(pod, ctx), 'wait-ready').retryAfterMs, 30_000);
  });
  test('someone changed the image after our patch: failed SpecChanged', () => {
    const pod = makePod(patched(1_000, { containers: [{ name: 'nginx', image: OLD, specImage: 'nginx:other' }] }));
    assert.equal(expectKind(decide(pod, ctx), 'failed').reason, 'SpecChanged');
  });
  test('same-digest retag: waits for the restart, then opens the gate', () => {
    const retagCtx = { ...ctx, containers: [{ name: 'nginx', image: RETAG }] };
    const st = upgraded(1_000, {
      containers: {
        nginx: {
          fromImage: OLD,
          fromImageID: imageIDOf(OLD),
          fromContainerID: 'containerd://nginx-0',
          fromRestartCount: 0,
          toImage: RETAG,
        },
      },
    });
    expectKind(
      decide(
        makePod({ ...closedByUs(6_000), state: st, containers: [{ name: 'nginx', image: OLD, specImage: RETAG }] }),
        retagCtx,
      ),
      'wait-complete',
    );
    expectKind(
      decide(
        makePod({
          ...closedByUs(6_000),
          state: st,
          containers: [{ name: 'nginx', image: RETAG, containerID: 'containerd://nginx-1', restartCount: 1 }],
        }),
        retagCtx,
      ),
      'open-gate',
    );
  });
  test('digest-pinned target running another digest: failed DigestMismatch', () => {
    const pinned = `nginx@sha256:${'b'.repeat(64)}`;
    const st = upgraded(1_000, {
      containers: {
        nginx: {
          fromImage: OLD,
          fromImageID: imageIDOf(OLD),
          fromContainerID: 'containerd://nginx-0',
          fromRestartCount: 0,
          toImage: pinned,
        },
      },
    });
    const pod = makePod({
      ...closedByUs(6_000),
      state: st,
      containers: [
        {
          name: 'nginx',
          image: pinned,
          imageID: imageIDOf('nginx:moved'),
          containerID: 'containerd://nginx-1',
          restartCount: 1,
        },
      ],
    });
    assert.equal(
      expectKind(decide(pod, { ...ctx, containers: [{ name: 'nginx', image: pinned }] }), 'failed').reason,
      'DigestMismatch',
    );
  });
  test('pod state of this plan rolled back, gate open: upgrade again from the start', () => {
    const rb = upgraded(60_000, { direction: 'rollback' });
    expectKind(decide(makePod({ state: rb }), ctx), 'close-gate');
  });
});

describe('decide: a re-run of the same revision resumes what its earlier runs left (never OtherRollout)', () => {
  /** The rollback patch this revision wrote `agoMs` ago: back from NEW to OLD. */
  const rolledBack = (agoMs: number): InPlaceState =>
    upgraded(agoMs, {
      direction: 'rollback',
      containers: {
        nginx: {
          fromImage: NEW,
          fromImageID: imageIDOf(NEW),
          fromContainerID: 'containerd://nginx-0',
          fromRestartCount: 0,
          toImage: OLD,
          toImageID: imageIDOf(OLD),
        },
      },
    });
  test('upgrade meets its own rollback, patched but not yet acted on: wait for it (no second patch)', () => {
    const pod = makePod({
      ...closedByUs(2_000, rollbackCtx),
      state: rolledBack(1_000),
      containers: [{ name: 'nginx', image: NEW, specImage: OLD, containerID: 'containerd://nginx-1' }],
    });
    expectKind(decide(pod, ctx), 'wait-complete');
  });
  test('upgrade meets its own rollback, back on the old images, gate closed by the rollback: drained, patch to the target', () => {
    const pod = makePod({
      ...closedByUs(20_000, rollbackCtx),
      state: rolledBack(10_000),
      containers: [{ name: 'nginx', image: OLD, containerID: 'containerd://nginx-2', restartCount: 2 }],
    });
    const s = expectKind(decide(pod, ctx), 'patch');
    assert.equal(s.state.direction, 'upgrade');
    assert.equal(s.state.containers.nginx?.fromImage, OLD);
    assert.equal(s.state.containers.nginx?.toImage, NEW);
  });
  test('upgrade meets its own rollback, back, gate closed by the upgrade (a failed pod): patch to the target', () => {
    const pod = makePod({
      ...closedByUs(20_000),
      state: rolledBack(10_000),
      containers: [{ name: 'nginx', image: OLD, containerID: 'containerd://nginx-2', restartCount: 2 }],
    });
    expectKind(decide(pod, ctx), 'patch');
  });
  test('upgrade meets the gate closed by its own rollback, no state (drained before a patch): ours, patch', () => {
    expectKind(decide(makePod({ ...closedByUs(20_000, rollbackCtx) }), ctx), 'patch');
  });
  test('rollback meets the gate closed by its own upgrade: ours, patch back', () => {
    const pod = makePod({
      ...closedByUs(20_000),
      state: upgraded(10_000),
      containers: [{ ...newContainer, imageID: imageIDOf(NEW) }],
    });
    expectKind(decide(pod, rollbackCtx), 'patch');
  });
  test('another revision of the plan still is foreign (OtherRollout)', () => {
    const pod = makePod({
      ...closedByUs(2_000, { ...rollbackCtx, revision: 'r0' }),
      state: { ...rolledBack(1_000), revision: 'r0' },
    });
    assert.equal(expectKind(decide(pod, ctx), 'foreign').reason, 'OtherRollout');
  });
  test('patched long ago by an earlier run, not yet acted on: a full podTimeout from when this run took it up', () => {
    const pod = makePod({
      ...closedByUs(3_600_000),
      state: upgraded(3_600_000 - 5_000),
      containers: [oldContainerPatched],
    });
    assert.equal(expectKind(decide(pod, ctx), 'failed').reason, 'Timeout');
    const s = expectKind(decide(pod, { ...ctx, watchedSinceMs: T0 - 1_000 }), 'wait-complete');
    assert.equal(s.retryAfterMs, 299_000);
  });
});

describe('decide: without a gate (required: false)', () => {
  const noGate = { ...ctx, gate: { conditionType: GATE, required: false } };
  const bare = (o: Partial<PodOpts>) => makePod({ declaresGate: false, gate: null, ...o });
  test('patches at once, no drain', () => void expectKind(decide(bare({}), noGate), 'patch'));
  test('after the patch: wait for completion', () => {
    expectKind(decide(bare({ state: upgraded(1_000), containers: [oldContainerPatched] }), noGate), 'wait-complete');
  });
  test('complete; minReadySeconds counts from the new container start even if Ready never flipped', () => {
    const pod = bare({
      state: upgraded(5_000),
      readySince: T0 - 3_600_000,
      containers: [{ ...newContainer, startedAt: T0 - 4_000 }],
    });
    assert.equal(expectKind(decide(pod, noGate), 'wait-ready').retryAfterMs, 7_000);
    expectKind(decide(pod, { ...noGate, nowMs: T0 + 7_000 }), 'done');
  });
});

describe('decide: rollback', () => {
  test('never patched by this revision: nothing to roll back', () => {
    assert.equal(expectKind(decide(makePod(), rollbackCtx), 'skipped').reason, 'NothingToRollBack');
  });
  test('drained by the upgrade but never patched: reopen the gate', () => {
    expectKind(decide(makePod({ ...closedByUs(10_000) }), rollbackCtx), 'open-gate');
  });
  test('upgraded and serving: close the gate, naming the rollback', () => {
    const pod = makePod({ state: upgraded(60_000), containers: [newContainer] });
    const s = expectKind(decide(pod, rollbackCtx), 'close-gate');
    assert.equal(s.body.status.conditions[0]?.message, 'kwave: rollback by plan web (revision r1)');
  });
  test('drained by the rollback: patch back to the recorded images', () => {
    const pod = makePod({ ...closedByUs(10_000, rollbackCtx), state: upgraded(60_000), containers: [newContainer] });
    const s = expectKind(decide(pod, rollbackCtx), 'patch');
    assert.deepEqual(s.body.spec?.containers, [{ name: 'nginx', image: OLD }]);
    assert.equal(s.state.direction, 'rollback');
    assert.deepEqual(s.state.containers.nginx, {
      fromImage: NEW,
      fromImageID: imageIDOf(NEW),
      fromContainerID: 'containerd://nginx-1',
      fromRestartCount: 1,
      toImage: OLD,
      toImageID: imageIDOf(OLD),
      originContainerID: 'containerd://nginx-0',
    });
  });
  test('a failed pod still drained by its upgrade: patch back at once', () => {
    const pod = makePod({
      ...closedByUs(120_000),
      state: upgraded(100_000),
      containers: [{ name: 'nginx', image: 'nginx:crash', specImage: NEW, waiting: { reason: 'CrashLoopBackOff' } }],
    });
    expectKind(decide(pod, rollbackCtx), 'patch');
  });
  test('rolled back, old image confirmed, gate closed: reopen; then done', () => {
    const rb: InPlaceState = {
      ...upgraded(10_000),
      direction: 'rollback',
      containers: {
        nginx: {
          fromImage: NEW,
          fromImageID: imageIDOf(NEW),
          fromContainerID: 'containerd://nginx-1',
          fromRestartCount: 1,
          toImage: OLD,
          toImageID: imageIDOf(OLD),
          originContainerID: 'containerd://nginx-0',
        },
      },
    };
    const back = {
      name: 'nginx',
      image: OLD,
      containerID: 'containerd://nginx-2',
      restartCount: 2,
      startedAt: T0 - 5_000,
    };
    expectKind(
      decide(makePod({ ...closedByUs(15_000, rollbackCtx), state: rb, containers: [back] }), rollbackCtx),
      'open-gate',
    );
    expectKind(
      decide(
        makePod({
          state: rb,
          gate: 'True',
          gateSince: T0 - 20_000,
          readySince: T0 - 20_000,
          containers: [{ ...back, startedAt: T0 - 30_000 }],
        }),
        rollbackCtx,
      ),
      'done',
    );
  });
  test('restoring an image the kubelet still holds in restart back-off: wait (to podTimeout); its crash: failed', () => {
    // The upgrade to NEW failed its pull after the kubelet killed OLD (nginx-0); the rollback restores OLD.
    const rb = (agoMs: number): InPlaceState => ({
      ...upgraded(agoMs),
      direction: 'rollback',
      containers: {
        nginx: {
          fromImage: NEW,
          fromImageID: imageIDOf(OLD),
          fromContainerID: 'containerd://nginx-0',
          fromRestartCount: 0,
          toImage: OLD,
          toImageID: imageIDOf(OLD),
          originContainerID: 'containerd://nginx-0',
        },
      },
    });
    const waiting = { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=nginx' };
    const pod = (agoMs: number, c: Partial<ContainerOpts> = {}) =>
      makePod({
        ...closedByUs(agoMs + 1_000, rollbackCtx),
        state: rb(agoMs),
        containers: [{ name: 'nginx', image: OLD, imageID: imageIDOf(OLD), waiting, ...c }],
      });
    expectKind(decide(pod(1_000), rollbackCtx), 'wait-complete');
    assert.equal(expectKind(decide(pod(400_000), rollbackCtx), 'failed').reason, 'Timeout');
    const crashed = { containerID: 'containerd://nginx-1', restartCount: 1 };
    assert.equal(expectKind(decide(pod(1_000, crashed), rollbackCtx), 'failed').reason, 'CrashLoopBackOff');
  });
  test('already back on the recorded image (someone else reverted), gate closed: reopen', () => {
    const pod = makePod({
      ...closedByUs(10_000, rollbackCtx),
      state: upgraded(60_000),
      containers: [{ name: 'nginx', image: OLD, containerID: 'containerd://nginx-5' }],
    });
    expectKind(decide(pod, rollbackCtx), 'open-gate');
  });
  test('gate held by another plan: foreign', () => {
    const pod = makePod({
      ...closedByUs(10_000, { ...rollbackCtx, plan: 'other' }),
      state: upgraded(60_000),
      containers: [newContainer],
    });
    expectKind(decide(pod, rollbackCtx), 'foreign');
  });
});

test('gateOwner reads back the flow from the condition message', () => {
  assert.deepEqual(gateOwner(makePod({ ...closedByUs(0) }), GATE), {
    direction: 'upgrade',
    plan: 'web',
    revision: 'r1',
  });
  assert.equal(
    gateOwner(makePod({ gate: 'False', gateReason: 'Other', gateMessage: gateMessage('upgrade', 'web', 'r1') }), GATE),
    undefined,
  );
  assert.equal(gateOwner(makePod(), GATE), undefined);
});

// The 1.37 kubelet's reports for an image whose container exits 300 ms after it starts, with no
// readiness probe (recorded from `kubectl get -w` on the kubelet backend): running and Ready at
// once (its start is relisted on demand), then terminated (exit 1, at the next periodic relist),
// started again at once, terminated, then CrashLoopBackOff.
describe('decide: a new container that crashes right after it starts', () => {
  const opened = { state: upgraded(2_000), gate: 'True' as const, gateSince: T0 - 1_000 };
  const first = { ...newContainer, startedAt: T0 - 1_000 };
  const second = { ...newContainer, containerID: 'containerd://nginx-2', restartCount: 2, startedAt: T0 + 1_000 };
  const crashed = (c: typeof first) => ({ ...c, terminated: { exitCode: 1, reason: 'Error' } });
  const ctx3 = { ...ctx, minReadyMs: 3_000 };
  test('minReadySeconds 0: Ready on the new image is done, as a Deployment counts such a pod available', () => {
    expectKind(decide(makePod({ ...opened, readySince: T0, containers: [first] }), { ...ctx, minReadyMs: 0 }), 'done');
  });
  test('minReadySeconds 3: each crash is waited through, each restart counts again, and the back-off fails it', () => {
    const ready = expectKind(decide(makePod({ ...opened, readySince: T0, containers: [first] }), ctx3), 'wait-ready');
    assert.equal(ready.retryAfterMs, 4_000, 'from the end of the stored second of its Ready');
    const exited = decide(makePod({ ...opened, ready: false, containers: [crashed(first)] }), {
      ...ctx3,
      nowMs: T0 + 500,
    });
    assert.equal(expectKind(exited, 'wait-complete').completion.reason, 'Terminated');
    // Started again before Ready ever turned False in a report: the count starts at its start.
    const again = makePod({ ...opened, readySince: T0, containers: [second] });
    assert.equal(expectKind(decide(again, { ...ctx3, nowMs: T0 + 1_500 }), 'wait-ready').retryAfterMs, 3_500);
    const backOff = makePod({
      ...opened,
      ready: false,
      containers: [
        {
          ...second,
          waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=nginx' },
        },
      ],
    });
    const failed = expectKind(decide(backOff, { ...ctx3, nowMs: T0 + 3_000 }), 'failed');
    assert.equal(failed.reason, 'CrashLoopBackOff');
    assert.deepEqual(
      failed.reclose?.status.conditions.map((c) => [c.type, c.status]),
      [[GATE, 'False']],
      'the gate it had reopened is closed again; the pod is not Ready already',
    );
  });
});
