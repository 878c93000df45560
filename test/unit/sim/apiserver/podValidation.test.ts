import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../../../src/sim/apiserver/json.js';
import { fieldErrorText } from '../../../../src/sim/apiserver/status.js';
import {
  POD_UPDATE_FORBIDDEN,
  validatePodCreate,
  validatePodStatus,
  validatePodUpdate,
} from '../../../../src/sim/apiserver/validation/pod.js';

const pod = (): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default' },
  spec: {
    nodeName: 'n1',
    terminationGracePeriodSeconds: 30,
    containers: [{ name: 'app', image: 'app:1', ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }] }],
    initContainers: [{ name: 'init', image: 'init:1' }],
    tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }],
    readinessGates: [{ conditionType: 'kwave.dev/in-place-ready' }],
  },
});
const change = (mutate: (spec: JsonObject) => void) => {
  const next = pod();
  mutate(next.spec as JsonObject);
  return validatePodUpdate(pod(), next).map(fieldErrorText);
};
const containers = (spec: JsonObject) => spec.containers as JsonObject[];

describe('pod update validation', () => {
  test('image changes are allowed (containers and init containers)', () => {
    assert.deepEqual(
      change((s) => {
        containers(s)[0]!.image = 'app:2';
        (s.initContainers as JsonObject[])[0]!.image = 'init:2';
      }),
      [],
    );
  });

  test('activeDeadlineSeconds may be set, then only lowered', () => {
    assert.deepEqual(
      change((s) => (s.activeDeadlineSeconds = 100)),
      [],
    );
    const old = pod();
    (old.spec as JsonObject).activeDeadlineSeconds = 100;
    const next = pod();
    (next.spec as JsonObject).activeDeadlineSeconds = 200;
    assert.match(
      validatePodUpdate(old, next).map(fieldErrorText).join(),
      /spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value/,
    );
  });

  test('tolerations may be added, and existing ones change only tolerationSeconds', () => {
    assert.deepEqual(
      change((s) => (s.tolerations as JsonObject[]).push({ key: 'new', operator: 'Exists' })),
      [],
    );
    assert.deepEqual(
      change((s) => ((s.tolerations as JsonObject[])[0]!.tolerationSeconds = 5)),
      [],
    );
    assert.deepEqual(
      change((s) => (s.tolerations = [])),
      ['spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds'],
    );
  });

  test('terminationGracePeriodSeconds may only go from negative to 1', () => {
    assert.equal(change((s) => (s.terminationGracePeriodSeconds = 10)).length, 1);
    const old = pod();
    (old.spec as JsonObject).terminationGracePeriodSeconds = -1;
    const next = pod();
    (next.spec as JsonObject).terminationGracePeriodSeconds = 1;
    assert.deepEqual(validatePodUpdate(old, next), []);
  });

  const forbidden: [string, (s: JsonObject) => void, string][] = [
    [
      'a port',
      (s) => ((containers(s)[0]!.ports as JsonObject[])[0]!.containerPort = 81),
      'spec.containers[0].ports[0].containerPort',
    ],
    [
      'an env value',
      (s) => ((containers(s)[0]!.env as JsonObject[])[0]!.value = '2'),
      'spec.containers[0].env[0].value',
    ],
    ['readinessGates', (s) => (s.readinessGates = []), 'spec.readinessGates'],
    ['nodeName', (s) => (s.nodeName = 'n2'), 'spec.nodeName'],
    ['a container name', (s) => (containers(s)[0]!.name = 'other'), 'spec.containers[0].name'],
  ];
  for (const [what, mutate, path] of forbidden) {
    test(`changing ${what} is Forbidden and the message names ${path}`, () => {
      const errors = change(mutate);
      assert.equal(errors.length, 1);
      assert.ok(errors[0]!.startsWith(`spec: Forbidden: ${POD_UPDATE_FORBIDDEN}\n`), errors[0]);
      assert.ok(errors[0]!.includes(path), errors[0]);
    });
  }

  test('adding or removing a container is its own refusal', () => {
    assert.deepEqual(
      change((s) => containers(s).push({ name: 'b', image: 'b:1' })),
      ['spec.containers: Forbidden: pod updates may not add or remove containers'],
    );
    assert.deepEqual(
      change((s) => (s.initContainers = [])),
      ['spec.initContainers: Forbidden: pod updates may not add or remove containers'],
    );
  });

  test('an empty image is Required', () => {
    assert.deepEqual(
      change((s) => (containers(s)[0]!.image = '')),
      ['spec.containers[0].image: Required value'],
    );
  });

  test('leaving out a defaulted field is not a change', () => {
    const old = pod();
    (old.spec as JsonObject).dnsPolicy = 'ClusterFirst';
    (old.spec as JsonObject).restartPolicy = 'Always';
    assert.deepEqual(validatePodUpdate(old, pod()), []);
  });
});

describe('pod status validation', () => {
  test('condition types must be qualified names, system ones excepted', () => {
    const p = pod();
    p.status = {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'kwave.dev/in-place-ready', status: 'True' },
      ],
    };
    assert.deepEqual(validatePodStatus(p), []);
    p.status = { conditions: [{ type: 'not a name!', status: 'True' }] };
    const [err] = validatePodStatus(p).map(fieldErrorText);
    // `Type`, capitalised, as kube-apiserver v1.33 prints it (checked by sim-fidelity on the real pass).
    assert.match(
      err!,
      /^status.conditions\[0\].Type: Invalid value: "not a name!": name part must consist of alphanumeric characters/,
    );
  });
});

describe('pod create validation', () => {
  test('containers are required, names unique DNS labels, images set', () => {
    assert.deepEqual(validatePodCreate({ spec: { containers: [] } }).map(fieldErrorText), [
      'spec.containers: Required value',
    ]);
    const errs = validatePodCreate({
      spec: {
        containers: [
          { name: 'a', image: 'x' },
          { name: 'a', image: '' },
          { name: 'Bad_Name', image: 'y' },
        ],
      },
    }).map(fieldErrorText);
    assert.equal(errs.length, 3);
    assert.match(errs[0]!, /Duplicate value: "a"/);
    assert.match(errs[1]!, /spec.containers\[1\].image: Required value/);
    assert.match(errs[2]!, /spec.containers\[2\].name: Invalid value: "Bad_Name"/);
  });
});
