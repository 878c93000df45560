// decodePodBrief is decodePod's view cut to the fields a selection reads: on any pod that passes
// the shape check, each field it has holds what decodePod's view holds there, and a selection
// made of brief views classifies every pod as one made of whole views.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { V1Pod } from '@kubernetes/client-node';
import { decodePod, decodePodBrief, podShapeProblem } from '../../../src/cluster/decode.js';
import { intakeOf } from '../../../src/rollout/select.js';
import { STATE_ANNOTATION } from '../../../src/inplace/state.js';
import { testPlan } from '../helpers/plans.js';

const GATE = 'kwave.dev/in-place-ready';
const plan = testPlan({ name: 'web' });

type Json = Record<string, unknown>;

/** What of decodePod's view decodePodBrief keeps (its documented fields), built from that view. */
function briefOf(full: V1Pod): Json {
  const md = (full.metadata ?? {}) as Json;
  const metadata: Json = {};
  for (const k of ['name', 'namespace', 'uid', 'deletionTimestamp', 'labels', 'annotations', 'ownerReferences'])
    if (md[k] !== undefined) metadata[k] = md[k];
  const spec = (full.spec ?? {}) as Json;
  const outSpec: Json = {};
  if (spec.nodeName !== undefined) outSpec.nodeName = spec.nodeName;
  outSpec.containers = (spec.containers as Json[]).map((c) => {
    const o: Json = {};
    if (c.name !== undefined) o.name = c.name;
    if (c.image !== undefined) o.image = c.image;
    return o;
  });
  if (spec.readinessGates !== undefined) outSpec.readinessGates = spec.readinessGates;
  const status = (full.status ?? {}) as Json;
  const outStatus: Json = {};
  if (status.conditions !== undefined) outStatus.conditions = status.conditions;
  if (status.containerStatuses !== undefined) {
    outStatus.containerStatuses = (status.containerStatuses as Json[]).map((c) => {
      const o: Json = {};
      for (const k of ['name', 'image', 'imageID']) if (c[k] !== undefined) o[k] = c[k];
      const state = c.state as Json | undefined;
      if (state !== undefined) o.state = state.running !== undefined ? { running: state.running } : {};
      return o;
    });
  }
  return { metadata, spec: outSpec, status: outStatus };
}

const anyValue = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant({}),
  fc.constant([]),
);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(fc.oneof(a, anyValue), { nil: undefined });
const time = fc.constantFrom('2026-01-01T00:00:00Z', '2026-01-01T00:00:05Z');
const image = fc.constantFrom(
  'nginx:1.25.3',
  'nginx:1.14.2',
  'docker.io/library/nginx:1.25.3',
  'nginx@sha256:' + 'a'.repeat(64),
);
const state = JSON.stringify({
  plan: 'web',
  revision: 'r',
  wave: 1,
  startedAt: '2026-01-01T00:00:00Z',
  direction: 'upgrade',
  containers: {},
});

const condition = fc.record(
  {
    type: maybe(fc.constantFrom('Ready', GATE, 'PodScheduled')),
    status: maybe(fc.constantFrom('True', 'False', 'Unknown')),
    reason: maybe(fc.constantFrom('InPlaceUpdate', 'Other')),
    message: maybe(
      fc.constantFrom('kwave: upgrade by plan web (revision r1)', 'kwave: upgrade by plan other (revision r2)', 'x'),
    ),
    lastTransitionTime: maybe(time),
  },
  { requiredKeys: [] },
);

const rawPod = fc.record(
  {
    kind: fc.constantFrom('Pod', undefined),
    metadata: fc.record(
      {
        name: fc.constantFrom('web-0', 'web-1'),
        namespace: maybe(fc.constantFrom('web', 'other')),
        uid: maybe(fc.constantFrom('u1', 'u2')),
        deletionTimestamp: maybe(time),
        labels: maybe(fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('web', 'db'))),
        annotations: maybe(
          fc.dictionary(fc.constantFrom(STATE_ANNOTATION, 'kwave.dev/x', 'other/y'), fc.constantFrom(state, '{', 'v')),
        ),
        ownerReferences: maybe(
          fc.array(
            fc.oneof(
              anyValue,
              fc.record(
                {
                  apiVersion: maybe(fc.constant('apps/v1')),
                  kind: maybe(fc.constantFrom('StatefulSet', 'ReplicaSet')),
                  name: maybe(fc.constant('web')),
                  uid: maybe(fc.constant('o1')),
                  controller: maybe(fc.boolean()),
                },
                { requiredKeys: [] },
              ),
            ),
            { maxLength: 2 },
          ),
        ),
      },
      { requiredKeys: ['name'] },
    ),
    spec: fc.option(
      fc.record(
        {
          nodeName: maybe(fc.constantFrom('node-1', 'node-2')),
          containers: maybe(
            fc.array(
              fc.record(
                {
                  name: maybe(fc.constantFrom('nginx', 'side')),
                  image: maybe(image),
                  imagePullPolicy: maybe(fc.constant('IfNotPresent')),
                },
                { requiredKeys: [] },
              ),
              { maxLength: 2 },
            ),
          ),
          readinessGates: maybe(
            fc.array(fc.record({ conditionType: maybe(fc.constantFrom(GATE, 'other')) }, { requiredKeys: [] }), {
              maxLength: 2,
            }),
          ),
          tolerations: maybe(fc.array(fc.constant({ key: 'k', operator: 'Exists' }), { maxLength: 1 })),
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    ),
    status: fc.option(
      fc.record(
        {
          phase: maybe(fc.constant('Running')),
          conditions: maybe(fc.array(condition, { maxLength: 3 })),
          containerStatuses: maybe(
            fc.array(
              fc.record(
                {
                  name: maybe(fc.constantFrom('nginx', 'side')),
                  image: maybe(image),
                  imageID: maybe(fc.constantFrom('docker.io/library/nginx@sha256:' + 'a'.repeat(64), 'x')),
                  ready: maybe(fc.boolean()),
                  state: maybe(
                    fc.oneof(
                      fc.constant({ running: { startedAt: '2026-01-01T00:00:00Z' } }),
                      fc.constant({ running: {} }),
                      fc.constant({ waiting: { reason: 'ErrImagePull' } }),
                      fc.constant({ terminated: { exitCode: 1 } }),
                    ),
                  ),
                },
                { requiredKeys: [] },
              ),
              { maxLength: 2 },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    ),
  },
  { requiredKeys: ['metadata'] },
);

describe('decodePodBrief', () => {
  test('each field it has holds what decodePod holds there', () => {
    fc.assert(
      fc.property(rawPod, (raw) => {
        fc.pre(podShapeProblem(raw) === undefined);
        assert.deepEqual(decodePodBrief(raw), briefOf(decodePod(raw)));
      }),
      { numRuns: 2000 },
    );
  });

  test('a selection of brief views classifies every pod as one of whole views', () => {
    const keep = (pod: V1Pod): V1Pod => ({ metadata: pod.metadata ?? {} });
    fc.assert(
      fc.property(fc.array(rawPod, { maxLength: 5 }), (raws) => {
        const ok = raws.filter((r) => podShapeProblem(r) === undefined);
        const whole = intakeOf(plan, ok.map(decodePod), keep);
        const brief = intakeOf(plan, ok.map(decodePodBrief), keep);
        assert.deepEqual(brief.problems, whole.problems);
        assert.deepEqual(
          brief.pods.map(({ pod: _, ...c }) => c),
          whole.pods.map(({ pod: _, ...c }) => c),
        );
      }),
      { numRuns: 2000 },
    );
  });

  test('the simulator pod the bench lists', () => {
    const raw = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'demo-0',
        namespace: 'default',
        labels: { app: 'demo' },
        uid: 'c00a',
        creationTimestamp: '2026-12-04T17:40:25Z',
        resourceVersion: '9',
      },
      spec: {
        containers: [{ name: 'nginx', image: 'nginx:1.14.2', imagePullPolicy: 'IfNotPresent' }],
        nodeName: 'sim-node-1',
        readinessGates: [{ conditionType: GATE }],
      },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-12-04T17:40:25Z' },
        ],
        containerStatuses: [
          {
            name: 'nginx',
            state: { running: { startedAt: '2026-12-04T17:40:25Z' } },
            lastState: {},
            ready: true,
            restartCount: 0,
            image: 'docker.io/library/nginx:1.14.2',
            imageID: 'docker.io/library/nginx@sha256:bf6b',
            started: true,
          },
        ],
      },
    };
    assert.deepEqual(decodePodBrief(raw), {
      metadata: { name: 'demo-0', namespace: 'default', uid: 'c00a', labels: { app: 'demo' } },
      spec: {
        nodeName: 'sim-node-1',
        containers: [{ name: 'nginx', image: 'nginx:1.14.2' }],
        readinessGates: [{ conditionType: GATE }],
      },
      status: {
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-04T17:40:25Z' }],
        containerStatuses: [
          {
            name: 'nginx',
            image: 'docker.io/library/nginx:1.14.2',
            imageID: 'docker.io/library/nginx@sha256:bf6b',
            state: { running: { startedAt: '2026-12-04T17:40:25Z' } },
          },
        ],
      },
    });
  });
});
