import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../../../src/sim/apiserver/json.js';
import { patchSchemaFor } from '../../../../src/sim/apiserver/patch/schema.js';
import { strategicMerge } from '../../../../src/sim/apiserver/patch/strategic.js';
import { ApiError } from '../../../../src/sim/apiserver/status.js';

const pod = (): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels: { app: 'web', tier: 'front' }, finalizers: ['a'] },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'app:1',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        ports: [{ containerPort: 80 }],
      },
      { name: 'sidecar', image: 'side:1' },
    ],
    tolerations: [{ key: 'k', operator: 'Exists' }],
    readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }],
    volumes: [{ name: 'v', emptyDir: {} }],
  },
  status: {
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'kwave.dev/in-place-ready', status: 'True' },
    ],
  },
});
const smp = (patch: unknown, original = pod()) => strategicMerge(original, patch, patchSchemaFor('Pod'));
const containers = (o: JsonObject) => (o.spec as JsonObject).containers as JsonObject[];

describe('strategic merge patch', () => {
  test('a container image is merged by name, the other containers kept', () => {
    const out = smp({ spec: { containers: [{ name: 'sidecar', image: 'side:2' }] } });
    assert.deepEqual(
      containers(out).map((c) => [c.name, c.image]),
      [
        ['app', 'app:1'],
        ['sidecar', 'side:2'],
      ],
    );
    assert.equal((containers(out)[0]!.env as unknown[]).length, 2);
  });

  test('env is merged by name and ports by containerPort', () => {
    const out = smp({
      spec: {
        containers: [
          {
            name: 'app',
            env: [
              { name: 'B', value: '3' },
              { name: 'C', value: '4' },
            ],
            ports: [{ containerPort: 81 }],
          },
        ],
      },
    });
    const app = containers(out)[0]!;
    assert.deepEqual(app.env, [
      { name: 'A', value: '1' },
      { name: 'B', value: '3' },
      { name: 'C', value: '4' },
    ]);
    assert.deepEqual(app.ports, [{ containerPort: 80 }, { containerPort: 81 }]);
  });

  test('conditions are merged by type', () => {
    const out = smp({ status: { conditions: [{ type: 'kwave.dev/in-place-ready', status: 'False' }] } });
    assert.deepEqual((out.status as JsonObject).conditions, [
      { type: 'Ready', status: 'True' },
      { type: 'kwave.dev/in-place-ready', status: 'False' },
    ]);
  });

  test('atomic lists (tolerations, readinessGates) are replaced whole', () => {
    const out = smp({ spec: { tolerations: [{ key: 'other', operator: 'Exists' }], readinessGates: [] } });
    assert.deepEqual((out.spec as JsonObject).tolerations, [{ key: 'other', operator: 'Exists' }]);
    assert.deepEqual((out.spec as JsonObject).readinessGates, []);
  });

  test('null deletes a map member', () => {
    const out = smp({ metadata: { labels: { tier: null } } });
    assert.deepEqual((out.metadata as JsonObject).labels, { app: 'web' });
  });

  test('$patch: delete removes a keyed list item', () => {
    const out = smp({ spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } });
    assert.deepEqual(
      containers(out).map((c) => c.name),
      ['app'],
    );
  });

  test('$patch: replace on a list item replaces the list', () => {
    const out = smp({ spec: { containers: [{ name: 'only', image: 'x' }, { $patch: 'replace' }] } });
    assert.deepEqual(containers(out), [{ name: 'only', image: 'x' }]);
  });

  test('$patch: replace on a map replaces the map', () => {
    const out = smp({ metadata: { labels: { $patch: 'replace', fresh: 'yes' } } });
    assert.deepEqual((out.metadata as JsonObject).labels, { fresh: 'yes' });
  });

  test('$patch: delete on a map removes it', () => {
    const out = smp({ status: { $patch: 'delete' } });
    assert.equal(out.status, undefined);
  });

  test('$setElementOrder reorders the named items', () => {
    const out = smp({
      $setElementOrder: undefined,
      spec: {
        '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }],
        containers: [{ name: 'app', image: 'app:2' }],
      },
    });
    assert.deepEqual(
      containers(out).map((c) => `${c.name}=${c.image}`),
      ['sidecar=side:1', 'app=app:2'],
    );
  });

  test('$deleteFromPrimitiveList removes finalizers; a merged primitive list is a union', () => {
    const out = smp({ metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } });
    assert.deepEqual((out.metadata as JsonObject).finalizers, []);
    const added = smp({ metadata: { finalizers: ['a', 'b'] } });
    assert.deepEqual((added.metadata as JsonObject).finalizers, ['a', 'b']);
  });

  test('$retainKeys keeps only the named members', () => {
    const out = smp({
      spec: { volumes: [{ name: 'v', $retainKeys: ['name', 'hostPath'], hostPath: { path: '/x' } }] },
    });
    assert.deepEqual((out.spec as JsonObject).volumes, [{ name: 'v', hostPath: { path: '/x' } }]);
  });

  test('a keyed list item without its merge key is the real 500', () => {
    assert.throws(
      () => smp({ spec: { containers: [{ image: 'i' }] } }),
      (e: unknown) =>
        e instanceof ApiError &&
        e.status.code === 500 &&
        e.status.message === 'map: map[image:i] does not contain declared merge key: name' &&
        e.status.reason === undefined,
    );
  });

  test('an unknown $patch directive is refused', () => {
    assert.throws(() => smp({ spec: { $patch: 'bogus' } }), ApiError);
  });

  test('a non-object body is a 400', () => {
    assert.throws(
      () => smp([1, 2]),
      (e: unknown) => e instanceof ApiError && e.status.code === 400,
    );
  });

  test('the original is not changed', () => {
    const original = pod();
    const before = JSON.stringify(original);
    smp({ spec: { containers: [{ name: 'app', image: 'app:9' }] } }, original);
    assert.equal(JSON.stringify(original), before);
  });

  test('kinds without a schema merge maps and replace lists', () => {
    const out = strategicMerge(
      { kind: 'ConfigMap', data: { a: '1' }, list: [1, 2] },
      { data: { b: '2' }, list: [3] },
      patchSchemaFor('ConfigMap'),
    );
    assert.deepEqual(out, { kind: 'ConfigMap', data: { a: '1', b: '2' }, list: [3] });
  });
});
