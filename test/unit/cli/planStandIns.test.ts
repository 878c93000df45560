// `kwave plan` shows which pods would stand in for a wave's pods whose node cannot act, so the
// wave still reaches its count before its gates (docs/plan-reference.md, waves).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { planReport, renderPlanText } from '../../../src/cli/planView.js';
import { selectFleet } from '../../../src/rollout/select.js';
import { makePod, NEW, OLD } from '../inplace/fixtures.js';
import { testPlan } from '../helpers/plans.js';

const plan = testPlan({
  namespace: 'default',
  image: NEW,
  strategy: '{ waves: [1, "100%"], concurrency: 2, maxUnavailable: 2 }',
  extra: '  gates: [{ name: canary-check, pause: 0s }]\n',
});

/** Six pods web-0 … on node-1..3 (web-0 and web-3 on node-1). */
function pods(): V1Pod[] {
  return Array.from({ length: 6 }, (_, i) => {
    const pod = makePod({ name: `web-${i}`, uid: `uid-${i}`, containers: [{ name: 'nginx', image: OLD }] });
    pod.spec!.nodeName = `node-${(i % 3) + 1}`;
    return pod;
  });
}

function node(name: string, ready: boolean): V1Node {
  return {
    metadata: { name },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'Unknown', reason: 'NodeStatusUnknown' }] },
  };
}

describe('kwave plan with the canary on a node that cannot act', () => {
  const nodes = new Map([
    ['node-1', node('node-1', false)],
    ['node-2', node('node-2', true)],
    ['node-3', node('node-3', true)],
  ]);
  const r = planReport(plan, selectFleet(plan, pods()), { known: true }, Date.now(), nodes);

  test('the JSON names the stand-in and the pod it stands in for, in the canary wave only', () => {
    const w1 = r.waves[0]!;
    assert.deepEqual(
      w1.standIns?.map((p) => p.name),
      ['web-1'],
    );
    assert.deepEqual(
      w1.standingInFor?.map((p) => p.name),
      ['web-0'],
    );
    assert.equal(r.waves[1]!.standIns, undefined, 'the last wave has no pod left to stand in');
  });

  test('the text says it under the wave, before its gate', () => {
    const text = renderPlanText(r).join('\n');
    assert.match(
      text,
      /wave 1\/2: 1 pod, then 1 of 6 at target\n {2}default\/web-0 .*\n {2}standing in for default\/web-0 \(waiting for their node\): default\/web-1\n {2}then gate canary-check/,
      text,
    );
  });

  test('every node Ready: no stand-in, the report as before', () => {
    const all = new Map([...nodes].map(([k]) => [k, node(k, true)]));
    const ok = planReport(plan, selectFleet(plan, pods()), { known: true }, Date.now(), all);
    assert.ok(ok.waves.every((w) => w.standIns === undefined && !('standingInFor' in w)));
  });
});
