// `kwave plan` and `kwave run` agree on what refuses a run (both backends): both call the one
// assessment of a selection (src/session/assessment.ts). For each kind of refusing problem the
// dry run reports it as an error and exits 2, and the run refuses with exit 2, naming the same
// problem, before it touches a pod.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { connect, type Cluster } from '../../src/cluster/index.js';
import { GATE_CLOSED_REASON, gateMessage } from '../../src/inplace/gateCondition.js';
import type { PlanReport } from '../../src/cli/planView.js';
import type { ProblemKind } from '../../src/rollout/select.js';
import { realNotBuilt } from './helpers/backend.js';
import { GATE, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';

const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
workloads:
  - { name: gateless, replicas: 2, labels: { app: gateless }, readinessGate: false, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { name: named, replicas: 2, labels: { app: named }, containers: [{ name: app, image: "nginx:1.14.2" }] }
  - { name: guarded, replicas: 2, labels: { app: guarded }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { name: web, kind: Deployment, replicas: 2, labels: { app: web }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { name: theirs, replicas: 2, labels: { app: theirs }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { name: mine, replicas: 2, labels: { app: mine }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
podDisruptionBudgets:
  - { name: guarded-pdb, selector: { matchLabels: { app: guarded } }, minAvailable: "100%" }
`;

interface Case {
  kind: ProblemKind;
  /** The plan's name and the app it selects. */
  plan: string;
  app: string;
  owners?: 'update';
}

const CASES: Case[] = [
  { kind: 'empty-selection', plan: 'nobody', app: 'nobody' },
  { kind: 'gate-missing', plan: 'gateless', app: 'gateless' },
  { kind: 'container-missing', plan: 'named', app: 'named' },
  { kind: 'pdb-never', plan: 'guarded', app: 'guarded' },
  { kind: 'owner', plan: 'web', app: 'web', owners: 'update' },
  { kind: 'other-plan', plan: 'theirs', app: 'theirs' },
  { kind: 'other-revision', plan: 'mine', app: 'mine' },
];

describe('kwave plan and kwave run agree on every refusal', { skip: realNotBuilt }, () => {
  let fleet: Fleet;
  let cluster: Cluster;
  before(async () => {
    fleet = await startFleet({ fixture: FIXTURE });
    cluster = connect({ kubeconfig: fleet.kubeconfig, env: {} });
    // One pod of each of these is mid-flight, its gate closed by another plan / another revision of this one.
    for (const [app, owner] of [
      ['theirs', gateMessage('upgrade', 'someone-else', 'r1')],
      ['mine', gateMessage('upgrade', 'mine', 'an-earlier-revision')],
    ] as const) {
      const pod = (await fleet.pods(app)).keys().next().value!;
      await cluster.patchPodCondition('default', pod, {
        type: GATE,
        status: 'False',
        reason: GATE_CLOSED_REASON,
        message: owner,
      });
    }
  });
  after(async () => {
    cluster?.close();
    await fleet?.close();
  });

  for (const c of CASES) {
    test(`${c.kind}: kwave plan reports it and exits 2; kwave run refuses with exit 2 naming it`, async () => {
      const doc = parse(planYaml({ name: c.plan, app: c.app, waves: '["100%"]' })) as { spec: Record<string, unknown> };
      if (c.owners) doc.spec.owners = c.owners;
      const file = await fleet.writePlan(`${c.plan}.yaml`, stringify(doc, { lineWidth: 0 }));

      const dry = await fleet.kwave(['plan', file, '-o', 'json']);
      assert.equal(dry.code, 2, dry.stdout + dry.stderr);
      const report = JSON.parse(dry.stdout) as PlanReport;
      assert.equal(report.refused, true);
      const errors = report.problems.filter((p) => p.severity === 'error');
      const problem = errors.find((p) => p.kind === c.kind);
      assert.ok(problem, `kwave plan reports a ${c.kind} error: ${JSON.stringify(report.problems)}`);

      const run = await fleet.kwave(['run', file, '--metrics-address', 'off']);
      assert.equal(run.code, 2, run.stdout + run.stderr);
      assert.match(run.stderr, /refusing to run:/);
      for (const e of errors)
        assert.ok(run.stderr.includes(`  - ${e.message}`), `kwave run names "${e.message}":\n${run.stderr}`);
      const untouched = [...(await fleet.pods(c.app)).values()].every((p) => !p.image.endsWith('nginx:1.25.3'));
      assert.ok(untouched, 'no pod was upgraded');
    });
  }
});
