// The image patch refused by admission (a webhook's 403, a policy's 422), and kwave killed
// exactly between its image patch and the answer (the simulator holds the answer back): each
// through the real `kwave run`, each checked on the cluster.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';
import { embeddedOnly } from './helpers/backend.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

async function admission(fleet: Fleet, rules: unknown[]): Promise<void> {
  const res = await fetch(`${fleet.sim.metricsUrl}/sim/admission`, { method: 'POST', body: JSON.stringify(rules) });
  assert.equal(res.status, 200, await res.text());
}
async function held(fleet: Fleet): Promise<number> {
  return ((await (await fetch(`${fleet.sim.metricsUrl}/sim/admission`)).json()) as { held: number }).held;
}

// On the real backend the same refusals would come from a ValidatingAdmissionPolicy; the hold (an
// answer kept back so kwave can be killed between its patch and the answer) has no real equivalent.
describe(
  'kwave run: admission',
  { skip: embeddedOnly("refusing or holding a write uses the simulator's admission rules (POST /sim/admission)") },
  () => {
    for (const code of [403, 422] as const) {
      test(`an image patch refused with ${code}: the pod fails, is put back in service on its old image, the run halts (exit 3)`, async () => {
        const fleet = await startFleet({ pods: 3 });
        try {
          await admission(fleet, [{ verb: 'patch', resource: 'pods', name: 'demo-1', refuse: code }]);
          const plan = await fleet.writePlan(
            'adm.yaml',
            planYaml({ name: 'adm', waves: '["100%"]', concurrency: 1, maxUnavailable: 1 }),
          );
          const run = fleet.start(['run', plan]);
          const exit = await exitOf(run);
          const pods = await fleet.pods();
          const refused = pods.get('demo-1')!;
          assert.equal(exit.code, 3, run.stderr() + run.stdout().slice(-2000));
          assert.equal(refused.specImage, 'nginx:1.14.2', 'the refused patch changed nothing');
          assert.equal(refused.imageID, OLD_ID);
          assert.equal(refused.restartCount, 0);
          assert.equal(refused.ready, true, 'back in service: its gate reopened');
          assert.equal(refused.gate, 'True');
          const end = endOf(run);
          assert.equal(end.phase, 'Halted');
          const failed = run.events.find((e) => e.event === 'pod-end' && e.pod === 'default/demo-1');
          assert.ok(failed && failed.event === 'pod-end' && failed.result === 'failed', JSON.stringify(failed));
          assert.match(JSON.stringify(failed), new RegExp(code === 403 ? 'denied the request' : 'is invalid'));
          // demo-0 went first and was upgraded; with maxFailed 0 and rollback: failed it stays upgraded.
          assert.equal(pods.get('demo-0')!.imageID, NEW_ID);
        } finally {
          await fleet.close();
        }
      });
    }

    test('killed between the image patch and its answer: the rerun finds the patch and completes, one restart per pod', async () => {
      const fleet = await startFleet({ pods: 3 });
      try {
        await admission(fleet, [{ verb: 'patch', resource: 'pods', name: 'demo-1', hold: true, times: 1 }]);
        const plan = await fleet.writePlan(
          'held.yaml',
          planYaml({ name: 'held', waves: '["100%"]', concurrency: 1, maxUnavailable: 1 }),
        );
        const first = fleet.start(['run', plan]);
        // The patch is written and its answer held: kill now, and the kill is where the test says.
        const deadline = Date.now() + 120_000;
        while ((await held(fleet)) === 0) {
          if (Date.now() > deadline || first.child.exitCode !== null)
            throw new Error(`the patch of demo-1 was never held\n${first.stdout().slice(-2000)}\n${first.stderr()}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(
          (await fleet.pods()).get('demo-1')!.specImage,
          'nginx:1.25.3',
          'the patch was written before the answer was held',
        );
        first.child.kill('SIGKILL');
        assert.equal((await exitOf(first)).signal, 'SIGKILL');
        await admission(fleet, []);

        const again = fleet.start(['run', plan]);
        const exit = await exitOf(again);
        assert.equal(exit.code, 0, again.stderr());
        for (const [name, p] of await fleet.pods()) {
          assert.equal(p.imageID, NEW_ID, name);
          assert.equal(p.restartCount, 1, `${name}: one restart`);
          assert.equal(p.gate, 'True', name);
        }
      } finally {
        await fleet.close();
      }
    });
  },
);
