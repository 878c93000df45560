// selectFleet: from a plan and the pods the cluster holds to the rollout's work — which pods are
// selected, done, to do or resumed, in what order and waves, and what refuses or warns.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { GATE_CLOSED_REASON, gateMessage } from '../../../src/inplace/decide.js';
import type { InPlaceState } from '../../../src/inplace/state.js';
import { selectFleet, zonesOf } from '../../../src/rollout/select.js';
import { testPlan } from '../helpers/plans.js';
import { makePod, NEW, OLD, T0 } from '../inplace/fixtures.js';

const plan = testPlan({
  strategy: '{ waves: [1, "100%"], concurrency: 2, maxUnavailable: "50%" }',
  failurePolicy: '{ maxFailed: "25%" }',
});

/** Pod `name` in namespace web, running `image`. */
function pod(name: string, image = OLD, extra: Parameters<typeof makePod>[0] = {}): V1Pod {
  return makePod({ name, namespace: 'web', uid: `uid-${name}`, containers: [{ name: 'nginx', image }], ...extra });
}

/** The state annotation a flow of `revision` of plan `planName` writes with its image patch. */
function stateOf(planName: string, revision: string): InPlaceState {
  return {
    plan: planName,
    revision,
    wave: 1,
    startedAt: new Date(T0).toISOString(),
    direction: 'upgrade',
    containers: { nginx: { fromImage: OLD, fromImageID: '', fromContainerID: '', fromRestartCount: 0, toImage: NEW } },
  };
}

/** A pod mid-flight under `planName`/`revision`: the gate closed by that flow, its state written. */
function midFlight(name: string, planName: string, revision: string): V1Pod {
  return pod(name, OLD, {
    gate: 'False',
    gateReason: GATE_CLOSED_REASON,
    gateMessage: gateMessage('upgrade', planName, revision),
    state: stateOf(planName, revision),
  });
}

const keys = (pods: readonly { namespace: string; name: string }[]) => pods.map((p) => `${p.namespace}/${p.name}`);

describe('selectFleet: which pods', () => {
  test('takes the target namespace and selector only, in natural name order', () => {
    const other = pod('web-5');
    other.metadata!.labels = { app: 'api' };
    const elsewhere = makePod({ name: 'web-6', namespace: 'default', uid: 'u6' });
    const s = selectFleet(plan, [pod('web-10'), pod('web-2'), other, elsewhere, pod('web-1')]);
    assert.deepEqual(keys(s.selected), ['web/web-10', 'web/web-2', 'web/web-1'], 'selected keeps the listed order');
    assert.deepEqual(keys(s.todo), ['web/web-1', 'web/web-2', 'web/web-10']);
    assert.deepEqual(s.problems, []);
  });

  test('a pod being deleted is left out, with a warning', () => {
    const s = selectFleet(plan, [pod('web-0'), pod('web-1', OLD, { deleting: true })]);
    assert.deepEqual(keys(s.selected), ['web/web-0']);
    assert.deepEqual(s.problems, [
      { kind: 'terminating', pod: 'web/web-1', severity: 'warning', message: 'web/web-1 is being deleted; left out' },
    ]);
  });

  test('nothing matching is an error naming the namespaces', () => {
    const one = selectFleet(plan, [makePod({ name: 'x', namespace: 'default' })]);
    assert.deepEqual(one.problems, [
      { kind: 'empty-selection', severity: 'error', message: 'no pod in namespace web matches the selector' },
    ]);
    const many = selectFleet({ ...plan, target: { ...plan.target, namespaces: ['web', 'api'] } }, []);
    assert.equal(many.problems[0]!.message, 'no pod in namespaces web, api matches the selector');
  });

  test('node and zone come with each pod: the zone from its node’s topology label', () => {
    const zones = zonesOf([
      { metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'zone-a' } } },
      { metadata: { name: 'n2', labels: {} } },
      { metadata: { labels: { 'topology.kubernetes.io/zone': 'zone-c' } } },
    ]);
    assert.deepEqual([...zones], [['n1', 'zone-a']]);
    const onN1 = pod('web-0');
    onN1.spec!.nodeName = 'n1';
    const onN2 = pod('web-1');
    onN2.spec!.nodeName = 'n2';
    const s = selectFleet(plan, [onN1, onN2, pod('web-2')], zones);
    assert.deepEqual(
      s.selected.map((p) => [p.name, p.node, p.zone]),
      [
        ['web-0', 'n1', 'zone-a'],
        ['web-1', 'n2', undefined],
        ['web-2', undefined, undefined],
      ],
    );
  });
});

describe('selectFleet: done, to do, resumed, waves and limits', () => {
  test('pods at the target are done; the rest are to do, split into waves counting the done ones', () => {
    const s = selectFleet(plan, [pod('web-0', NEW), pod('web-1'), pod('web-2'), pod('web-3')]);
    assert.deepEqual(keys(s.done), ['web/web-0']);
    assert.deepEqual(keys(s.todo), ['web/web-1', 'web/web-2', 'web/web-3']);
    assert.deepEqual(s.resumed, []);
    // waves [1, 100%] of 4 pods, one already done: the done pod meets wave 1's target of 1.
    assert.deepEqual(s.partition.satisfied, [1], 'wave 1 (numbered from 1)');
    assert.deepEqual(
      s.partition.waves.map((w) => keys(w.pods)),
      [['web/web-1', 'web/web-2', 'web/web-3']],
    );
    assert.equal(s.partition.alreadyDone, 1);
    assert.equal(s.budget, 2, 'maxUnavailable 50% of 4');
    assert.equal(s.maxFailed, 1, 'maxFailed 25% of 4');
  });

  test('a pod this revision left mid-flow is resumed, and goes first', () => {
    const s = selectFleet(plan, [pod('web-0'), midFlight('web-1', plan.name, plan.revision), pod('web-2')]);
    assert.deepEqual(keys(s.resumed), ['web/web-1']);
    assert.deepEqual(keys(s.todo), ['web/web-1', 'web/web-0', 'web/web-2']);
    assert.deepEqual(s.problems, []);
  });

  test('a pod whose gate this revision closed, before any state was written, is resumed too', () => {
    const drained = pod('web-1', OLD, {
      gate: 'False',
      gateReason: GATE_CLOSED_REASON,
      gateMessage: gateMessage('upgrade', plan.name, plan.revision),
    });
    assert.deepEqual(keys(selectFleet(plan, [pod('web-0'), drained]).resumed), ['web/web-1']);
  });
});

describe('selectFleet: problems of a pod', () => {
  test('a pod without the readiness gate: an error, or a warning when the gate is not required', () => {
    const bare = pod('web-0', OLD, { declaresGate: false });
    assert.deepEqual(selectFleet(plan, [bare]).problems, [
      {
        kind: 'gate-missing',
        pod: 'web/web-0',
        severity: 'error',
        message: 'web/web-0 does not declare the readiness gate kwave.dev/in-place-ready',
      },
    ]);
    const optional = testPlan({ extra: '  readinessGate: { required: false }\n' });
    assert.deepEqual(selectFleet(optional, [bare]).problems, [
      {
        kind: 'gate-missing',
        pod: 'web/web-0',
        severity: 'warning',
        message:
          'web/web-0 does not declare the readiness gate kwave.dev/in-place-ready: it will be upgraded without draining',
      },
    ]);
  });

  test('a pod without the container the plan updates is an error', () => {
    const sidecarOnly = makePod({
      name: 'web-0',
      namespace: 'web',
      containers: [{ name: 'envoy', image: 'envoy:1.29' }],
    });
    assert.deepEqual(selectFleet(plan, [sidecarOnly]).problems, [
      {
        kind: 'container-missing',
        pod: 'web/web-0',
        severity: 'error',
        message: 'web/web-0 has no container named nginx',
      },
    ]);
  });

  test('a pod mid-flight under another revision of this plan names that revision; under another plan, the plan', () => {
    const s = selectFleet(plan, [midFlight('web-0', plan.name, '0000000000'), midFlight('web-1', 'other', 'abc')]);
    assert.deepEqual(s.problems, [
      {
        kind: 'other-revision',
        pod: 'web/web-0',
        severity: 'error',
        revision: '0000000000',
        message: `web/web-0 is mid-flight under revision 0000000000 of this plan (now ${plan.revision}); finish it with that plan, or use --force`,
      },
      { kind: 'other-plan', pod: 'web/web-1', severity: 'error', message: 'web/web-1 is mid-flight under plan other' },
    ]);
    assert.deepEqual(s.resumed, [], 'neither is this revision’s to resume');
  });

  test('another flow’s state on a pod whose gate is open again is no problem (that flow ended)', () => {
    const ended = pod('web-0', OLD, { state: stateOf('other', 'abc') });
    assert.deepEqual(selectFleet(plan, [ended]).problems, []);
  });
});
