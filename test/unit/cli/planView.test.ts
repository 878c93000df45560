import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { KwaveError } from '../../../src/errors.js';
import { dryRun } from '../../../src/cli/commands/plan.js';
import type { PlanSources } from '../../../src/session/dryRun.js';
import { gatesAfter, planReport, renderPlanText } from '../../../src/cli/planView.js';
import type { Plan } from '../../../src/plan/types.js';
import { selectFleet } from '../../../src/rollout/select.js';
import { makePod, NEW, OLD } from '../inplace/fixtures.js';
import { testPlan } from '../helpers/plans.js';

function plan(strategy: string, extra = ''): Plan {
  return testPlan({ namespace: 'default', image: NEW, strategy, extra });
}

const NODES = ['node-1', 'node-2', 'node-3'];
/** `n` pods web-0 … on three nodes; `at` of them already at the target image. */
function pods(n: number, opts: { at?: number; declaresGate?: boolean } = {}): V1Pod[] {
  return Array.from({ length: n }, (_, i) => {
    const pod = makePod({
      name: `web-${i}`,
      uid: `uid-${i}`,
      containers: [{ name: 'nginx', image: i < (opts.at ?? 0) ? NEW : OLD }],
      declaresGate: opts.declaresGate,
    });
    pod.spec!.nodeName = NODES[i % 3];
    return pod;
  });
}
const ZONES = new Map([
  ['node-1', 'zone-a'],
  ['node-2', 'zone-b'],
  ['node-3', 'zone-c'],
]);

describe('planReport', () => {
  test('waves, skips and limits as data', () => {
    const p = plan(
      `{ waves: [1, "10%", "50%", "100%"], concurrency: 3, maxUnavailable: "10%" }`,
      '  failurePolicy: { maxFailed: "10%" }',
    );
    const r = planReport(p, selectFleet(p, pods(40, { at: 2 }), ZONES), { known: true });
    assert.equal(r.selected, 40);
    assert.equal(r.alreadyAtTarget, 2);
    assert.equal(r.toUpgrade, 38);
    // Targets 1, 4, 20, 40; the 2 done pods meet wave 1: waves 2, 3, 4 take 2, 16, 20.
    assert.deepEqual(r.satisfiedWaves, [1]);
    assert.deepEqual(
      r.waves.map((w) => [w.wave, w.pods.length, w.target]),
      [
        [2, 2, 4],
        [3, 16, 20],
        [4, 20, 40],
      ],
    );
    assert.equal(r.budget, 4);
    assert.equal(r.maxFailed, 4);
    assert.deepEqual(
      r.skipped.map((s) => s.name),
      ['web-0', 'web-1'],
    );
    assert.deepEqual(r.waves[0]!.pods[0], { namespace: 'default', name: 'web-2', node: 'node-3', zone: 'zone-c' });
    assert.equal(r.refused, false);
    assert.equal(r.selector, 'app=web');
  });

  test('gates after a wave: afterWaves as written, else every wave but the last', () => {
    const p = plan(
      '{ waves: [1, 2, 3] }',
      `  gates:
    - { name: soak, pause: 90s }
    - { name: ok, approval: true, afterWaves: [2] }`,
    );
    assert.deepEqual(
      gatesAfter(p.gates, 1, 3).map((g) => g.name),
      ['soak'],
    );
    assert.deepEqual(
      gatesAfter(p.gates, 2, 3).map((g) => g.name),
      ['soak', 'ok'],
    );
    assert.deepEqual(gatesAfter(p.gates, 3, 3), []);
    const text = renderPlanText(planReport(p, selectFleet(p, pods(3), ZONES), { known: true })).join('\n');
    assert.match(
      text,
      /wave 1\/3: 1 pod, then 1 of 3 at target\n {2}default\/web-0\s+node-1\s+zone-a\n {2}then gate soak \(pause 1m30s\)\n/,
    );
    assert.match(text, /then gate soak \(pause 1m30s\)\n {2}then gate ok \(approval\)/);
  });
});

describe('renderPlanText', () => {
  test('shortens long waves to their first and last pods, lined up across waves; --all lists every pod', () => {
    const p = plan('{ waves: [1, "100%"] }');
    const r = planReport(p, selectFleet(p, pods(30), ZONES), { known: true });
    const short = renderPlanText(r);
    const text = short.join('\n');
    assert.match(text, /wave 2\/2: 29 pods, then 30 of 30 at target/);
    assert.match(
      text,
      /\n {2}… 19 more \(--all lists every pod\)\n {2}default\/web-28 +node-2 +zone-b\n {2}default\/web-29 +node-3 +zone-c\n/,
    );
    const podLines = short.filter((l) => /^ {2}default\//.test(l));
    assert.equal(podLines.length, 11);
    const nodeColumn = new Set(podLines.map((l) => l.indexOf('node-')));
    assert.equal(nodeColumn.size, 1, 'the node column starts at the same place on every line');
    assert.match(short.at(-1)!, /^OK: kwave run would upgrade 30 pods in 2 waves\. Nothing was written\.$/);
    const all = renderPlanText(r, { all: true });
    assert.equal(all.filter((l) => /^ {2}default\//.test(l)).length, 30);
    for (const l of [...short, ...all]) assert.ok(l.length <= 100, l);
  });

  test('problems: errors refuse, grouped by kind and shortened', () => {
    const p = plan('{ waves: ["100%"] }');
    const r = planReport(p, selectFleet(p, pods(9, { declaresGate: false }), ZONES), { known: true });
    assert.equal(r.refused, true);
    assert.equal(r.errors, 9);
    const text = renderPlanText(r).join('\n');
    assert.match(
      text,
      /problems: 9 errors, 0 warnings\n {2}error {4}default\/web-0 does not declare the readiness gate kwave\.dev\/in-place-ready\n/,
    );
    assert.match(text, /… 4 more gate-missing problems \(--all lists them\)/);
    assert.match(text, /REFUSED: kwave run would refuse this plan \(9 errors above\)\.$/);
    assert.equal(
      (
        renderPlanText(r, { all: true })
          .join('\n')
          .match(/does not declare/g) ?? []
      ).length,
      9,
    );
  });

  test('a partial rollout lists the deferred pods; nothing to do is said so', () => {
    const p = plan('{ waves: [1, 2] }');
    const text = renderPlanText(planReport(p, selectFleet(p, pods(5), ZONES), { known: true })).join('\n');
    assert.match(text, /selected 5 pods: 2 to upgrade in 2 waves, 0 already at target, 3 deferred/);
    assert.match(
      text,
      /deferred past the last wave \(a partial rollout; a later plan continues\): 3 pods\n {2}default\/web-2/,
    );
    const done = renderPlanText(planReport(p, selectFleet(p, pods(2, { at: 2 }), ZONES), { known: true }));
    assert.equal(done.at(-1), 'nothing to do: every selected pod is already at the target.');
  });
});

describe('dryRun', () => {
  const p = plan('{ waves: [1, "100%"], order: spread-zones }');
  const sources = (listNodes: PlanSources['listNodes']): PlanSources & { selectors: string[] } => {
    const selectors: string[] = [];
    return {
      selectors,
      listPods: async (_ns, selector, onPage) => {
        selectors.push(selector);
        onPage(pods(4), true);
      },
      listNodes,
    };
  };

  test('lists pods with the plan selector and takes zones from the nodes', async () => {
    const s = sources(async () =>
      NODES.map((name, i) => ({ metadata: { name, labels: { 'topology.kubernetes.io/zone': `zone-${'abc'[i]}` } } })),
    );
    const r = await dryRun(p, s);
    assert.deepEqual(s.selectors, ['app=web']);
    assert.equal(r.zones.known, true);
    assert.equal(r.waves[0]!.pods[0]!.zone, 'zone-a');
  });

  test('goes on without zones when listing nodes is forbidden, and says so', async () => {
    const r = await dryRun(
      p,
      sources(async () =>
        Promise.reject(
          new KubeError(403, 'Forbidden', 'nodes is forbidden: User "kwave" cannot list resource "nodes"'),
        ),
      ),
    );
    assert.equal(r.zones.known, false);
    assert.equal(r.toUpgrade, 4);
    const text = renderPlanText(r).join('\n');
    assert.match(
      text,
      /zones: unknown, listing nodes is forbidden \(nodes is forbidden: User "kwave" cannot list resource "nodes"\)/,
    );
    assert.match(text, / {2}default\/web-0 +node-1 +\?\n/);
  });

  test("PDBs count the plan's pods by their own labels, also where pods in a row share them", async () => {
    // Labels by pod: a a b b a b; the PDB selects tier=b. A pod whose labels equal the one before
    // it shares that pod's object in what the dry run keeps; one that differs must not.
    const tiers = ['a', 'a', 'b', 'b', 'a', 'b'];
    const listed = pods(6).map((pod, i) => {
      pod.metadata!.labels = { app: 'web', tier: tiers[i]! };
      return pod;
    });
    const s: PlanSources = {
      listPods: async (_ns, _selector, onPage) => {
        onPage(structuredClone(listed.slice(0, 3)), true);
        onPage(structuredClone(listed.slice(3)), false);
      },
      listNodes: async () => [],
      listPdbs: async () => [
        {
          metadata: { name: 'tier-b', namespace: 'default' },
          spec: { selector: { matchLabels: { tier: 'b' } }, maxUnavailable: 0 },
        },
      ],
    };
    const r = await dryRun(plan('{ waves: ["100%"] }'), s);
    const pdb = r.problems.filter((x) => x.kind === 'pdb-never');
    assert.equal(pdb.length, 1);
    assert.match(
      pdb[0]!.message,
      /PodDisruptionBudget default\/tier-b \(maxUnavailable 0\) selects 3 pods of the plan/,
    );
  });

  test('other API errors stop it with a message naming what failed', async () => {
    await assert.rejects(
      dryRun(
        p,
        sources(async () => Promise.reject(new KubeError(500, 'InternalError', 'boom'))),
      ),
      (err: unknown) => {
        assert.ok(err instanceof KwaveError);
        assert.match(err.message, /listing nodes: boom/);
        return true;
      },
    );
  });
});
