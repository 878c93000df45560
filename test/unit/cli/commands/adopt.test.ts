// kwave adopt's pure parts: which pods it would adopt, and what a run of patches reports.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeError } from '../../../../src/cluster/kubeError.js';
import type { PodConditionPatch } from '../../../../src/cluster/requestBodies.js';
import { ADOPTED_REASON, adoptPods, classifyForAdoption } from '../../../../src/cli/commands/adopt.js';
import { GATE, makePod } from '../../inplace/fixtures.js';

describe('classifyForAdoption', () => {
  test('adopts pods that declare the gate but lack the condition; sorts by name, numbers as numbers', () => {
    const lacking = (name: string) => {
      const p = makePod({ name });
      p.status!.conditions = p.status!.conditions!.filter((c) => c.type !== GATE);
      return p;
    };
    const present = makePod({ name: 'web-3', gate: 'False' });
    const undeclared = makePod({ name: 'web-4', declaresGate: false });
    const leaving = lacking('web-5');
    leaving.metadata!.deletionTimestamp = new Date();
    const a = classifyForAdoption([lacking('web-10'), present, undeclared, leaving, lacking('web-2')], GATE);
    assert.deepEqual(a, {
      adopt: ['web-2', 'web-10'],
      present: [{ name: 'web-3', status: 'False' }],
      notDeclared: ['web-4'],
      terminating: ['web-5'],
    });
  });
});

describe('adoptPods', () => {
  test('sets the condition True on each pod; a pod gone is noted, other errors collected', async () => {
    const sent: [string, PodConditionPatch][] = [];
    const r = await adoptPods(
      async (name, c) => {
        sent.push([name, c]);
        if (name === 'gone') throw new KubeError(404, 'NotFound', 'pods "gone" not found');
        if (name === 'denied') throw new KubeError(403, 'Forbidden', 'forbidden');
        return {};
      },
      ['a', 'gone', 'denied'],
      GATE,
    );
    assert.deepEqual(r.adopted, ['a']);
    assert.deepEqual(r.vanished, ['gone']);
    assert.equal(r.failed.length, 1);
    assert.equal(r.failed[0]!.name, 'denied');
    assert.ok(sent.every(([, c]) => c.type === GATE && c.status === 'True' && c.reason === ADOPTED_REASON));
  });
});
