import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { LabelSelector } from '../../../src/plan/types.js';
import { isAtTarget } from '../../../src/inplace/atTarget.js';
import { matchesSelector, renderSelector } from '../../../src/rollout/labelSelector.js';
import { makePod, imageIDOf, NEW, OLD, GATE } from '../inplace/fixtures.js';

describe('matchesSelector', () => {
  const labels = { app: 'web', tier: 'front', canary: 'no' };
  const rows: { name: string; selector: LabelSelector; want: boolean }[] = [
    { name: 'empty selector matches everything', selector: {}, want: true },
    { name: 'matchLabels equal', selector: { matchLabels: { app: 'web' } }, want: true },
    { name: 'matchLabels differing value', selector: { matchLabels: { app: 'api' } }, want: false },
    { name: 'matchLabels absent key', selector: { matchLabels: { team: 'x' } }, want: false },
    {
      name: 'In with the value',
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['back', 'front'] }] },
      want: true,
    },
    {
      name: 'In without the value',
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] },
      want: false,
    },
    {
      name: 'In on an absent key',
      selector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
      want: false,
    },
    {
      name: 'NotIn with the value',
      selector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] },
      want: false,
    },
    {
      name: 'NotIn on an absent key matches',
      selector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] },
      want: true,
    },
    { name: 'Exists', selector: { matchExpressions: [{ key: 'canary', operator: 'Exists' }] }, want: true },
    {
      name: 'Exists on an absent key',
      selector: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
      want: false,
    },
    {
      name: 'DoesNotExist on a present key',
      selector: { matchExpressions: [{ key: 'canary', operator: 'DoesNotExist' }] },
      want: false,
    },
    {
      name: 'DoesNotExist on an absent key',
      selector: { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] },
      want: true,
    },
    {
      name: 'labels and expressions are ANDed',
      selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] },
      want: false,
    },
    {
      name: 'In with no values matches nothing',
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] },
      want: false,
    },
  ];
  for (const r of rows) test(r.name, () => assert.equal(matchesSelector(r.selector, labels), r.want));
  test('a pod without labels matches only selectors that ask for no label', () => {
    assert.equal(matchesSelector({}, undefined), true);
    assert.equal(matchesSelector({ matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] }, undefined), true);
    assert.equal(matchesSelector({ matchLabels: { a: 'b' } }, undefined), false);
  });
  test('keys inherited from Object.prototype are not labels', () => {
    assert.equal(matchesSelector({ matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, {}), false);
  });
});

describe('renderSelector', () => {
  test('all operators, keys and values sorted', () => {
    assert.equal(
      renderSelector({
        matchLabels: { tier: 'front', app: 'web' },
        matchExpressions: [
          { key: 'zone', operator: 'In', values: ['b', 'a'] },
          { key: 'track', operator: 'NotIn', values: ['canary'] },
          { key: 'team', operator: 'Exists' },
          { key: 'x', operator: 'DoesNotExist' },
        ],
      }),
      'app=web,tier=front,zone in (a,b),track notin (canary),team,!x',
    );
  });
  test('empty selector renders empty', () => assert.equal(renderSelector({}), ''));
});

describe('isAtTarget', () => {
  const plan = {
    update: { containers: [{ name: 'nginx', image: NEW }] },
    readinessGate: { conditionType: GATE, required: true },
  };
  const at = (pod: V1Pod) => isAtTarget(pod, plan);

  test('spec and running container on the target: at target', () => {
    assert.equal(at(makePod({ containers: [{ name: 'nginx', image: NEW }] })), true);
  });
  test('old image: not at target', () => {
    assert.equal(at(makePod({ containers: [{ name: 'nginx', image: OLD }] })), false);
  });
  test('spec says the target but the kubelet still runs the old container: in flight, not done', () => {
    const pod = makePod({ containers: [{ name: 'nginx', image: OLD }] });
    pod.spec!.containers[0]!.image = NEW;
    assert.equal(at(pod), false);
  });
  test('target image but not running (crash loop): not at target', () => {
    assert.equal(
      at(makePod({ containers: [{ name: 'nginx', image: NEW, waiting: { reason: 'CrashLoopBackOff' } }] })),
      false,
    );
  });
  test('at target but the gate still False: mid-flight, not done', () => {
    assert.equal(at(makePod({ containers: [{ name: 'nginx', image: NEW }], gate: 'False' })), false);
  });
  test('digest-pinned target: the imageID digest decides', () => {
    const digest = imageIDOf(NEW).split('@')[1] as string;
    const pinned = { ...plan, update: { containers: [{ name: 'nginx', image: `nginx@${digest}` }] } };
    const pod = makePod({ containers: [{ name: 'nginx', image: `nginx@${digest}`, imageID: imageIDOf(NEW) }] });
    assert.equal(isAtTarget(pod, pinned), true);
    const wrong = makePod({ containers: [{ name: 'nginx', image: `nginx@${digest}`, imageID: imageIDOf(OLD) }] });
    assert.equal(isAtTarget(wrong, pinned), false);
  });
  test('two containers: both must be at target', () => {
    const two = {
      ...plan,
      update: {
        containers: [
          { name: 'nginx', image: NEW },
          { name: 'sidecar', image: 'envoy:1.30' },
        ],
      },
    };
    assert.equal(
      isAtTarget(
        makePod({
          containers: [
            { name: 'nginx', image: NEW },
            { name: 'sidecar', image: 'envoy:1.29' },
          ],
        }),
        two,
      ),
      false,
    );
    assert.equal(
      isAtTarget(
        makePod({
          containers: [
            { name: 'nginx', image: NEW },
            { name: 'sidecar', image: 'envoy:1.30' },
          ],
        }),
        two,
      ),
      true,
    );
  });
  test('a missing container: not at target', () => {
    assert.equal(at(makePod({ containers: [{ name: 'app', image: NEW }] })), false);
  });
});
