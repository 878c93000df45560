// PodDisruptionBudgets respected by `kwave run` (both backends): an in-place upgrade is no
// eviction, so the API server never checks a PDB for it; kwave does. A PDB with maxUnavailable 1
// over 10 pods holds a plan whose own budget would let 5 go at once to one pod at a time, as the
// simulator counts it (/sim/stats maxNotReady, not kwave's word), and `kwave status` names the
// PDB while pods wait. A PDB that never allows a disruption (minAvailable 100%) is reported by
// `kwave plan` and refuses the run; with respectPodDisruptionBudgets: false kwave ignores PDBs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { realNotBuilt } from './helpers/backend.js';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';

const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
workloads:
  - { name: web, replicas: 10, labels: { app: web }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { name: db, replicas: 2, labels: { app: db }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
podDisruptionBudgets:
  - { name: web-pdb, selector: { matchLabels: { app: web } }, maxUnavailable: 1 }
  - { name: db-pdb, selector: { matchLabels: { app: db } }, minAvailable: "100%" }
`;

describe('kwave run respects PodDisruptionBudgets', { skip: realNotBuilt }, () => {
  let fleet: Fleet;
  before(async () => {
    // Slow enough (a pod takes seconds) that `kwave status` can be asked while pods wait.
    fleet = await startFleet({ fixture: FIXTURE, timeScale: 4 });
  });
  after(async () => fleet?.close());

  test('maxUnavailable 1 over 10 pods holds a plan with maxUnavailable 5 to one pod not Ready at a time; status names the PDB', async () => {
    const plan = await fleet.writePlan(
      'web.yaml',
      planYaml({ name: 'web', app: 'web', waves: '["100%"]', concurrency: 5, maxUnavailable: 5, podTimeout: '120s' }),
    );
    const reset = await fleet.resetStats();
    assert.equal(reset.notReady.default ?? 0, 0);
    const run = fleet.start(['run', plan]);
    const held = await run.waitFor((e) => e.event === 'pdb-wait', 'a pod held by the PDB');
    assert.ok(held.event === 'pdb-wait');
    assert.equal(held.pdb, 'default/web-pdb');
    assert.match(held.message, /PodDisruptionBudget default\/web-pdb \(maxUnavailable 1\)/);

    // While pods wait, the record says which PDB holds them (text and JSON).
    const status = await fleet.status(plan);
    const hold = status.heldByPdb as { pdb: string; pod: string; message: string } | undefined;
    assert.ok(hold, `status -o json while pods wait has heldByPdb: ${JSON.stringify(status).slice(0, 1500)}`);
    assert.equal(hold.pdb, 'default/web-pdb');
    const text = await fleet.kwave(['status', plan]);
    assert.match(text.stdout, /held by PodDisruptionBudget default\/web-pdb/);

    const exit = await exitOf(run);
    assert.equal(exit.code, 0, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-2000)}`);
    assert.equal(endOf(run).phase, 'Completed');
    const pods = await fleet.pods('web');
    assert.equal(
      [...pods.values()].filter((p) => p.image === 'nginx:1.25.3' || p.image.endsWith('/nginx:1.25.3')).length,
      10,
    );
    const stats = await fleet.stats();
    assert.equal(stats.maxNotReady.default, 1, `the simulator saw ${stats.maxNotReady.default} pods not Ready at once`);
  });

  test('kwave plan reports a PDB that never allows a disruption, and kwave run refuses it', async () => {
    const plan = await fleet.writePlan('db.yaml', planYaml({ name: 'db', app: 'db', waves: '["100%"]' }));
    const dry = await fleet.kwave(['plan', plan]);
    assert.equal(dry.code, 2, dry.stdout + dry.stderr);
    assert.match(
      dry.stdout,
      /PodDisruptionBudget default\/db-pdb \(minAvailable 100%\) selects 2 pods of the plan and never allows one to be drained/,
    );
    const run = await fleet.kwave(['run', plan, '--metrics-address', 'off']);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr + run.stdout, /db-pdb.*never allows/);
  });

  test('with respectPodDisruptionBudgets: false the same PDB holds nothing back', async () => {
    const plan = await fleet.writePlan(
      'web-back.yaml',
      planYaml({
        name: 'web-back',
        app: 'web',
        image: 'nginx:1.14.2',
        waves: '["100%"]',
        concurrency: 5,
        maxUnavailable: 5,
        podTimeout: '120s',
        respectPodDisruptionBudgets: false,
      }),
    );
    await fleet.resetStats();
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 0, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-2000)}`);
    assert.equal(run.events.filter((e) => e.event === 'pdb-wait').length, 0);
    const stats = await fleet.stats();
    assert.ok(
      (stats.maxNotReady.default ?? 0) > 1,
      `without the PDB more than one pod is not Ready at once (saw ${stats.maxNotReady.default})`,
    );
  });
});
