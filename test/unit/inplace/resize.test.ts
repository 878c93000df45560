// The pure parts of in-place resize: quantities, QoS, restarts by resizePolicy, the per-pod steps
// of a resize (decide) and its completion rule (the kubelet's conditions and status resources).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { decide, type DecideContext } from '../../../src/inplace/decide.js';
import { resizeCompletion, resizeRefusal } from '../../../src/inplace/resizeCompletion.js';
import { applyTarget, qosClassOf, resizeRestarts, type Resources } from '../../../src/inplace/resources.js';
import { decodeState, encodeState, STATE_ANNOTATION, type InPlaceState } from '../../../src/inplace/state.js';
import { parseQuantity, sameQuantity } from '../../../src/quantity.js';
import { expectKind, GATE } from './fixtures.js';

const T0 = Date.parse('2026-12-06T10:00:00Z');
const OLD: Resources = { requests: { cpu: '100m', memory: '128Mi' } };
const NEW: Resources = { requests: { cpu: '250m', memory: '256Mi' } };

const ctx: DecideContext = {
  plan: 'web',
  revision: 'r1',
  wave: 1,
  direction: 'upgrade',
  containers: [{ name: 'nginx', resources: NEW }],
  gate: { conditionType: GATE, required: true },
  nowMs: T0,
  drainMs: 0,
  podTimeoutMs: 60_000,
  minReadyMs: 0,
};

interface PodOpts {
  spec?: Resources;
  status?: Resources;
  policy?: 'NotRequired' | 'RestartContainer';
  state?: InPlaceState;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  limits?: boolean;
}

function pod(o: PodOpts = {}): V1Pod {
  return {
    metadata: {
      name: 'web-0',
      namespace: 'default',
      uid: 'u1',
      resourceVersion: '7',
      ...(o.state ? { annotations: { [STATE_ANNOTATION]: encodeState(o.state) } } : {}),
    },
    spec: {
      containers: [
        {
          name: 'nginx',
          image: 'nginx:1.14.2',
          resources: o.spec ?? OLD,
          ...(o.policy ? { resizePolicy: [{ resourceName: 'memory', restartPolicy: o.policy }] } : {}),
        },
      ],
      readinessGates: [{ conditionType: GATE }],
    },
    status: {
      conditions: [
        ...(o.conditions ?? []),
        { type: GATE, status: 'True', lastTransitionTime: new Date(T0 - 60_000) },
        { type: 'Ready', status: 'True', lastTransitionTime: new Date(T0 - 60_000) },
      ],
      containerStatuses: [
        {
          name: 'nginx',
          image: 'docker.io/library/nginx:1.14.2',
          imageID: 'docker.io/library/nginx@sha256:' + 'a'.repeat(64),
          containerID: 'containerd://c1',
          restartCount: 0,
          ready: true,
          state: { running: { startedAt: new Date(T0 - 60_000) } },
          resources: o.status ?? o.spec ?? OLD,
        },
      ],
    },
  } as V1Pod;
}

const resizing = (over: Partial<InPlaceState> = {}): InPlaceState => ({
  plan: 'web',
  revision: 'r1',
  wave: 1,
  startedAt: new Date(T0 - 1000).toISOString(),
  direction: 'upgrade',
  containers: {
    nginx: {
      fromImage: 'nginx:1.14.2',
      fromImageID: 'docker.io/library/nginx@sha256:' + 'a'.repeat(64),
      fromContainerID: 'containerd://c1',
      fromRestartCount: 0,
      toImage: 'nginx:1.14.2',
      fromResources: OLD,
      toResources: NEW,
    },
  },
  inService: true,
  ...over,
});

describe('quantities', () => {
  for (const [a, b, resource, same] of [
    ['100m', '0.1', 'cpu', true],
    ['1', '1000m', 'cpu', true],
    ['250m', '0.25', 'cpu', true],
    ['128Mi', '134217728', 'memory', true],
    ['1Gi', '1024Mi', 'memory', true],
    ['1G', '1Gi', 'memory', false],
    ['100m', '101m', 'cpu', false],
  ] as const) {
    test(`${a} ${same ? '=' : '≠'} ${b} (${resource})`, () => assert.equal(sameQuantity(a, b, resource), same));
  }
  test('parses exponents and rejects what is no quantity', () => {
    assert.equal(parseQuantity('1e3'), 1000);
    assert.equal(parseQuantity('12x'), undefined);
  });
});

describe('QoS and restarts', () => {
  test('BestEffort, Burstable, Guaranteed from CPU and memory (requests default to limits)', () => {
    assert.equal(qosClassOf([{}]), 'BestEffort');
    assert.equal(qosClassOf([OLD]), 'Burstable');
    assert.equal(qosClassOf([{ limits: { cpu: '1', memory: '1Gi' } }]), 'Guaranteed');
    assert.equal(qosClassOf([{ requests: { cpu: '1000m' }, limits: { cpu: '1', memory: '1Gi' } }]), 'Guaranteed');
    assert.equal(qosClassOf([{ limits: { cpu: '1', memory: '1Gi' } }, OLD]), 'Burstable');
  });
  test('a target keeps what it does not name', () => {
    assert.deepEqual(
      applyTarget({ requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '2Gi' } }, { requests: { cpu: '2' } }),
      {
        requests: { cpu: '2', memory: '1Gi' },
        limits: { memory: '2Gi' },
      },
    );
  });
  test('RestartContainer restarts only for a resource that changes', () => {
    const c = { name: 'nginx', resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] };
    assert.equal(resizeRestarts(c, OLD, { requests: { cpu: '250m', memory: '128Mi' } }), false);
    assert.equal(resizeRestarts(c, OLD, NEW), true);
    assert.equal(resizeRestarts({ name: 'nginx' }, OLD, NEW), false);
  });
});

describe('decide: a resize', () => {
  test('NotRequired under whenRestarting: the state first, gate left open (in service)', () => {
    const s = expectKind(decide(pod(), ctx), 'patch');
    assert.equal(s.body.spec, undefined, 'no image in the patch');
    assert.equal(s.state.inService, true);
    assert.deepEqual(s.state.containers.nginx?.fromResources, OLD);
    assert.deepEqual(s.state.containers.nginx?.toResources, NEW);
    assert.equal(decodeState(s.body.metadata.annotations[STATE_ANNOTATION]!).ok, true);
  });
  test('drain: always closes the gate first', () => {
    expectKind(decide(pod(), { ...ctx, drain: 'always' }), 'close-gate');
  });
  test('RestartContainer for memory closes the gate first', () => {
    expectKind(decide(pod({ policy: 'RestartContainer' }), ctx), 'close-gate');
  });
  test('with the state on the pod and the spec still old: the guarded resize', () => {
    const s = expectKind(decide(pod({ state: resizing() }), ctx), 'resize');
    assert.deepEqual(s.body, {
      metadata: { resourceVersion: '7' },
      spec: { containers: [{ name: 'nginx', resources: NEW }] },
    });
  });
  test('spec resized, kubelet not yet: waiting; at target, Ready: done', () => {
    const w = expectKind(decide(pod({ state: resizing(), spec: NEW, status: OLD }), ctx), 'wait-complete');
    assert.equal(w.completion.reason, 'NotResized');
    expectKind(decide(pod({ state: resizing(), spec: NEW, status: NEW }), ctx), 'done');
  });
  test('a QoS change is refused before any write', () => {
    const s = expectKind(
      decide(pod(), {
        ...ctx,
        containers: [{ name: 'nginx', resources: { limits: { cpu: '100m', memory: '128Mi' } } }],
      }),
      'refused',
    );
    assert.equal(s.reason, 'QosChange');
    assert.match(s.message, /Burstable to Guaranteed/);
  });
  test('Infeasible fails at once with the kubelet message, gate kept open (the pod never left service)', () => {
    const message = "Node didn't have enough capacity: memory, requested: 68719476736, capacity: 34359738368";
    const p = pod({
      state: resizing(),
      spec: NEW,
      status: OLD,
      conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible', message }],
    });
    const s = expectKind(decide(p, ctx), 'failed');
    assert.equal(s.reason, 'ResizeInfeasible');
    assert.equal(s.message, `container nginx: ${message}`);
    assert.equal(s.reclose, undefined);
  });
  test('Deferred waits, and fails as ResizeDeferred once podTimeout ran out', () => {
    const message = "Node didn't have enough resource: cpu, requested: 700, used: 400, capacity: 1000";
    const p = pod({
      state: resizing(),
      spec: NEW,
      status: OLD,
      conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Deferred', message }],
    });
    expectKind(decide(p, { ...ctx, watchedSinceMs: T0 }), 'wait-complete');
    const s = expectKind(decide(p, { ...ctx, nowMs: T0 + 61_000 }), 'failed');
    assert.equal(s.reason, 'ResizeDeferred');
    assert.match(s.message, /capacity: 1000/);
  });
  test('rollback resizes back to the recorded resources and proves them', () => {
    const rb: DecideContext = { ...ctx, direction: 'rollback' };
    const failed = pod({ state: resizing(), spec: NEW, status: OLD });
    const s = expectKind(decide(failed, rb), 'patch');
    assert.deepEqual(s.state.containers.nginx?.toResources, OLD);
    const r = expectKind(decide(pod({ state: s.state, spec: NEW, status: OLD }), rb), 'resize');
    assert.deepEqual(r.body.spec.containers, [{ name: 'nginx', resources: OLD }]);
    expectKind(decide(pod({ state: s.state, spec: OLD, status: OLD }), rb), 'done');
  });
});

describe('resizeCompletion', () => {
  test('a pending condition is waiting while the container already reports the target (not yet cleared)', () => {
    const p = pod({
      spec: OLD,
      status: OLD,
      conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible', message: 'x' }],
    });
    assert.equal(resizeCompletion(p, 'nginx', OLD).status, 'waiting');
  });
  test('in progress is waiting; an older observed generation is waiting', () => {
    const p = pod({ spec: NEW, status: NEW, conditions: [{ type: 'PodResizeInProgress', status: 'True' }] });
    assert.equal(resizeCompletion(p, 'nginx', NEW).reason, 'ResizeInProgress');
    const stale = pod({ spec: NEW, status: NEW });
    stale.metadata!.generation = 3;
    stale.status!.observedGeneration = 2;
    assert.equal(resizeCompletion(stale, 'nginx', NEW).reason, 'StaleStatus');
    stale.status!.observedGeneration = 3;
    assert.equal(resizeCompletion(stale, 'nginx', NEW).status, 'done');
  });
});

describe('resizeRefusal', () => {
  const refusal = (code: number, causes: string[], message: string) => resizeRefusal({ code, causes, message });
  test("the server's NodeCapacity or UnsupportedPlatform refusal is the kubelet's Infeasible, with the server's message", () => {
    const message =
      'pods "huge-0" is forbidden: node didn\'t have enough allocatable resources: memory, requested: 68719476736, allocatable: 34359738368';
    assert.deepEqual(refusal(403, ['NodeCapacity'], message), {
      reason: 'ResizeInfeasible',
      message: `the resize was refused (HTTP 403): ${message}`,
    });
    assert.equal(refusal(403, ['UnsupportedPlatform'], 'pods "w" is forbidden: …').reason, 'ResizeInfeasible');
  });
  test('any other refusal is ResizeRefused, however it is worded', () => {
    for (const [code, causes, message] of [
      [403, [], 'pods "huge-0" is forbidden: node didn\'t have enough allocatable resources: memory'],
      [403, ['FieldValueForbidden'], 'pods "a" is forbidden: a webhook said no'],
      [422, ['FieldValueInvalid'], 'Pod "a" is invalid: spec: Forbidden: Pod QOS Class may not change'],
      [422, ['NodeCapacity'], 'not an admission refusal'],
    ] as const) {
      assert.equal(refusal(code, [...causes], message).reason, 'ResizeRefused', message);
    }
  });
});
