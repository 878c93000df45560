// Selectors, names and images crafted to inject into a query string, a URL path or a patch body.
// What the plan loader accepts must mean exactly what it says once it reaches the API server: a
// selector string parsed back (by the simulator's parser, which follows the API server's grammar)
// gives exactly the plan's requirements, and an image patch sets exactly the plan's image on
// exactly the named container. Command-line names go through `kwave adopt` against the simulator.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import type { V1Pod } from '@kubernetes/client-node';
import { decide } from '../../src/inplace/decide.js';
import { loadPlanText } from '../../src/plan/load.js';
import { renderSelector } from '../../src/rollout/labelSelector.js';
import { parseLabelSelector } from '../../src/sim/apiserver/labelSelector.js';
import { startSim } from '../../src/sim/index.js';
import { runKwave } from './cli.js';
import { injection, longFuzz, oddString, params } from './runs.js';

const labelish = fc.oneof(
  { arbitrary: fc.stringMatching(/^[a-z0-9]([a-z0-9._-]{0,20}[a-z0-9])?$/), weight: 8 },
  {
    arbitrary: fc.stringMatching(
      /^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?(\.[a-z0-9]{1,5})?\/[a-z0-9]([a-z0-9._-]{0,10}[a-z0-9])?$/,
    ),
    weight: 4,
  },
  { arbitrary: injection, weight: 1 },
  { arbitrary: oddString, weight: 1 },
);
const imageish = fc.oneof(
  fc.stringMatching(/^[a-z0-9]+(\/[a-z0-9]+)?:[A-Za-z0-9_.-]{1,10}$/),
  fc.stringMatching(/^[a-z0-9.]+(:[0-9]{2,5})?\/[a-z0-9]+@sha256:[0-9a-f]{64}$/),
  injection.map((s) => `nginx:${s}`),
  injection,
  oddString,
);

function planText(selector: unknown, image: string): string {
  return stringify({
    apiVersion: 'kwave.dev/v1alpha1',
    kind: 'RolloutPlan',
    metadata: { name: 'inject' },
    spec: {
      target: { namespace: 'default', selector },
      update: { containers: [{ name: 'nginx', image }] },
      strategy: { waves: ['100%'] },
    },
  });
}

type Req = { key: string; op: string; values: string[] };
const canon = (reqs: Req[]) => reqs.map((r) => `${r.key}|${r.op}|${[...new Set(r.values)].sort().join(',')}`).sort();

describe('injection through selectors, names and images', () => {
  test('an accepted selector means on the wire exactly what the plan says', (t) => {
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.dictionary(labelish, fc.oneof(labelish, fc.constant('')), { minKeys: 1, maxKeys: 3 }),
        fc.array(
          fc.record({
            key: labelish,
            operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist'),
            values: fc.array(labelish, { minLength: 1, maxLength: 3 }),
          }),
          { maxLength: 2 },
        ),
        (matchLabels, exprs) => {
          const matchExpressions = exprs.map((e) =>
            e.operator === 'Exists' || e.operator === 'DoesNotExist' ? { key: e.key, operator: e.operator } : e,
          );
          const r = loadPlanText(planText({ matchLabels, matchExpressions }, 'nginx:1.25.3'), 'plan.yaml');
          if (!r.ok) return;
          accepted++;
          const wire = renderSelector(r.plan.target.selector);
          const expected: Req[] = [
            ...Object.entries(matchLabels).map(([key, v]) => ({ key, op: 'equals', values: [v] })),
            ...matchExpressions.map((e) => ({
              key: e.key,
              op: { In: 'in', NotIn: 'notIn', Exists: 'exists', DoesNotExist: 'notExists' }[e.operator]!,
              values: 'values' in e ? [...new Set(e.values)] : [],
            })),
          ];
          assert.deepEqual(canon(parseLabelSelector(wire)), canon(expected), wire);
          // In the query string it is one parameter, whatever it holds.
          const q = new URLSearchParams({ labelSelector: wire, limit: '500' });
          assert.equal(q.get('labelSelector'), wire);
          assert.deepEqual([...q.keys()], ['labelSelector', 'limit']);
        },
      ),
      params(t, 300),
    );
    t.diagnostic(`accepted selectors: ${accepted}`);
  });

  test('an accepted image lands as exactly that image on exactly the named container', (t) => {
    let accepted = 0;
    fc.assert(
      fc.property(imageish, (image) => {
        const r = loadPlanText(planText({ matchLabels: { app: 'web' } }, image), 'plan.yaml');
        if (!r.ok) return;
        accepted++;
        assert.match(
          image,
          /^[A-Za-z0-9._\-/:@[\]]+$/,
          'an accepted image holds no quote, space, comma, newline or control character',
        );
        const pod: V1Pod = {
          metadata: { name: 'web-0', namespace: 'default', uid: 'u', resourceVersion: '7', labels: { app: 'web' } },
          spec: {
            containers: [
              { name: 'nginx', image: 'nginx:1.14.2' },
              { name: 'sidecar', image: 'envoy:1.29' },
            ],
          },
          status: {
            conditions: [{ type: 'Ready', status: 'True' }],
            containerStatuses: [
              {
                name: 'nginx',
                image: 'docker.io/library/nginx:1.14.2',
                imageID: `docker.io/library/nginx@sha256:${'a'.repeat(64)}`,
                containerID: 'containerd://1',
                restartCount: 0,
                ready: true,
                started: true,
                state: { running: {} },
              },
              {
                name: 'sidecar',
                image: 'docker.io/library/envoy:1.29',
                imageID: `docker.io/library/envoy@sha256:${'c'.repeat(64)}`,
                containerID: 'containerd://2',
                restartCount: 0,
                ready: true,
                started: true,
                state: { running: {} },
              },
            ],
          },
        };
        const step = decide(pod, {
          plan: 'inject',
          revision: 'r',
          wave: 1,
          direction: 'upgrade',
          containers: r.plan.update.containers,
          gate: { conditionType: 'kwave.dev/in-place-ready', required: false },
          nowMs: Date.now(),
          drainMs: 0,
          podTimeoutMs: 60_000,
          minReadyMs: 0,
        });
        if (step.kind !== 'patch') return; // e.g. the image is already the one running
        const body = JSON.parse(JSON.stringify(step.body)) as {
          metadata: Record<string, unknown>;
          spec: { containers: { name: string; image: string }[] };
        };
        assert.deepEqual(Object.keys(body).sort(), ['metadata', 'spec']);
        assert.deepEqual(Object.keys(body.spec), ['containers']);
        assert.deepEqual(body.spec.containers, [{ name: 'nginx', image }]);
        assert.equal(body.metadata.resourceVersion, '7');
      }),
      params(t, 300),
    );
    t.diagnostic(`accepted images: ${accepted}`);
  });

  test('kwave adopt with hostile -n and -l: refused with exit 2, and no request leaves the namespace path', async (t) => {
    const sim = await startSim({ pods: 3 });
    const dir = await mkdtemp(join(tmpdir(), 'kwave-inject-'));
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      await writeFile(kubeconfig, sim.kubeconfig(), { mode: 0o600 });
      const all: [string, string][] = [
        ['../../api/v1/namespaces/kube-system/secrets', 'app=demo'],
        ['default/pods/demo-0', 'app=demo'],
        ['default?labelSelector=', 'app=demo'],
        ['default', 'app=demo&fieldSelector=metadata.name=demo-0'],
        ['default', 'app in (demo'],
        ['default', '"},{"op":"remove","path":"/metadata"}'],
      ];
      // A spawn costs seconds on a loaded machine: three by default, all in the long mode.
      const cases = longFuzz ? all : [all[0]!, all[3]!, all[5]!];
      t.diagnostic(`fuzz runs: ${cases.length} through kwave adopt`);
      for (const [ns, selector] of cases) {
        await fetch(`${sim.metricsUrl}/sim/stats/reset`, { method: 'POST' });
        const r = await runKwave([
          'adopt',
          '-n',
          ns,
          '-l',
          selector,
          '--kubeconfig',
          kubeconfig,
          '--metrics-address',
          'off',
        ]);
        assert.equal(r.code, 2, `adopt -n ${ns} -l ${selector}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
        assert.doesNotMatch(r.stderr, /internal error|\n\s+at /, r.stderr);
        const stats = (await (await fetch(`${sim.metricsUrl}/sim/stats`)).json()) as {
          requests: Record<string, number>;
        };
        for (const key of Object.keys(stats.requests))
          assert.ok(['list pods'].includes(key), `adopt -n ${ns} -l ${selector} made a "${key}" request`);
      }
      const pods = sim.store.list('pods', 'default') as V1Pod[];
      assert.equal(pods.length, 3, 'no pod was deleted or created');
    } finally {
      await rm(dir, { recursive: true, force: true });
      await sim.close();
    }
  });
});
