// Normalization: defaults, units, and a revision that depends on what the plan does, not on
// how it is written.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { loadPlanText } from '../../../src/plan/load.js';
import type { Plan } from '../../../src/plan/types.js';
import { MINIMAL_PLAN } from './texts.js';

/** Starts with a blank line: the error lines below are pinned to it. */
const MINIMAL = `\n${MINIMAL_PLAN}`;

/** MINIMAL_GATED's revision as kwave computed it before prometheus `dryRun`, `consecutiveSuccessLimit` and `spec.owners` existed. */
const MINIMAL_GATED = `${MINIMAL}  gates:
    - name: error-rate
      prometheus: { address: "http://p:9090", query: up, successCondition: "result < 0.01", count: 3 }
`;
const MINIMAL_GATED_REVISION_BEFORE_DRY_RUN_AND_OWNERS = '9a4563fd52';

/** MINIMAL's revision as kwave computed it before `failurePolicy.countNodeFailures` existed. */
const MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES = '0237619567';

function load(text: string, file = 'plan.yaml'): Plan {
  const result = loadPlanText(text, file);
  if (!result.ok) assert.fail(JSON.stringify(result.errors, null, 1));
  return result.plan;
}

/** A full plan as a JS value, every field written. */
function fullPlan(): Record<string, unknown> {
  return {
    apiVersion: 'kwave.dev/v1alpha1',
    kind: 'RolloutPlan',
    metadata: { name: 'web' },
    spec: {
      target: {
        namespaces: ['web', 'shop'],
        selector: {
          matchLabels: { app: 'web', tier: 'front' },
          matchExpressions: [{ key: 'zone', operator: 'In', values: ['b', 'a'] }],
        },
      },
      update: {
        containers: [
          { name: 'nginx', image: 'nginx:1.25.3' },
          { name: 'envoy', image: 'envoyproxy/envoy:v1.29.4' },
        ],
      },
      readinessGate: { conditionType: 'example.com/ready', required: false },
      strategy: {
        waves: [2, '25%', '100%'],
        concurrency: 4,
        maxUnavailable: '10%',
        order: 'spread-nodes',
        drainSeconds: 3,
        podTimeout: '1h30m',
        minReadySeconds: 5,
      },
      failurePolicy: { maxFailed: '12.5%', rollback: 'all' },
      gates: [
        {
          name: 'error-rate',
          afterWaves: [2, 1],
          pause: '500ms',
          prometheus: {
            address: 'http://p:9090',
            query: 'up',
            successCondition: 'result < 0.01',
            interval: '10s',
            count: 3,
            auth: { bearerTokenFile: '/var/run/token' },
          },
        },
        { name: 'ticket', approval: true, webhook: { url: 'https://ci.example/check', retries: 0 } },
      ],
      window: { timezone: 'Europe/Berlin', allow: ['Mon-Fri 22:00-05:00'] },
      metrics: { pushgateway: 'http://pg:9091' },
    },
  };
}

/** The same value with the keys of every mapping in an order drawn from `seed`. */
function shuffleKeys(value: unknown, seed: number): unknown {
  let s = seed >>> 0 || 1;
  const next = () => ((s = (s * 1103515245 + 12345) >>> 0), s);
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== 'object' || v === null) return v;
    const entries = Object.entries(v).map(([k, x]) => [k, walk(x)] as const);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = next() % (i + 1);
      [entries[i], entries[j]] = [entries[j] as (typeof entries)[number], entries[i] as (typeof entries)[number]];
    }
    return Object.fromEntries(entries);
  };
  return walk(value);
}

describe('defaults', () => {
  test('a minimal plan gets every default of docs/plan-reference.md', () => {
    const plan = load(MINIMAL);
    assert.deepEqual(plan.target, { namespaces: ['web'], selector: { matchLabels: { app: 'web' } } });
    assert.deepEqual(plan.readinessGate, { conditionType: 'kwave.dev/in-place-ready', required: true });
    assert.deepEqual(plan.strategy, {
      waves: {
        kind: 'targets',
        targets: [
          { kind: 'count', value: 1 },
          { kind: 'fraction', value: 0.1 },
          { kind: 'fraction', value: 1 },
        ],
      },
      concurrency: 1,
      maxUnavailable: { kind: 'count', value: 1 },
      order: 'name',
      drainMs: 0,
      drain: 'whenRestarting',
      podTimeoutMs: 300_000,
      minReadyMs: 0,
      nodeGraceMs: 30_000,
      respectPodDisruptionBudgets: true,
      prePull: false,
      prePullConcurrency: 5,
    });
    assert.deepEqual(plan.failurePolicy, {
      maxFailed: { kind: 'count', value: 0 },
      rollback: 'failed',
      countNodeFailures: false,
    });
    assert.deepEqual(plan.gates, []);
    assert.equal(plan.window, undefined);
    assert.deepEqual(plan.metrics, {});
    assert.equal(plan.name, 'web');
    assert.match(plan.revision, /^[0-9a-f]{10}$/);
    assert.deepEqual(plan.source, { file: 'plan.yaml', text: MINIMAL });
  });

  test('maxUnavailable defaults to the concurrency', () => {
    const plan = load(MINIMAL.replace('waves: [1, "10%", "100%"]', 'waves: [1, "10%", "100%"]\n    concurrency: 7'));
    assert.deepEqual(plan.strategy.maxUnavailable, { kind: 'count', value: 7 });
  });

  test('gate defaults: Prometheus and webhook', () => {
    const plan = load(
      MINIMAL +
        `  gates:
    - name: g
      prometheus: { address: "http://p:9090", query: up, failureCondition: result > 1 }
    - name: w
      webhook: { url: "https://ci/x" }
`,
    );
    assert.deepEqual(plan.gates[0], {
      name: 'g',
      pauseMs: 0,
      approval: false,
      prometheus: {
        address: 'http://p:9090',
        query: 'up',
        failureCondition: 'result > 1',
        initialDelayMs: 0,
        intervalMs: 30_000,
        count: 1,
        failureLimit: 0,
        inconclusiveLimit: 0,
        consecutiveErrorLimit: 4,
        noData: 'inconclusive',
        timeoutMs: 10_000,
        dryRun: false,
        consecutiveSuccessLimit: 0,
      },
    });
    assert.deepEqual(plan.gates[1], {
      name: 'w',
      pauseMs: 0,
      approval: false,
      webhook: { url: 'https://ci/x', timeoutMs: 10_000, retries: 2 },
    });
  });

  test('units: durations in ms, percentages as fractions, seconds as ms, windows parsed', () => {
    const plan = load(stringify(fullPlan()));
    assert.equal(plan.strategy.podTimeoutMs, 5_400_000);
    assert.equal(plan.strategy.drainMs, 3000);
    assert.equal(plan.strategy.minReadyMs, 5000);
    assert.deepEqual(plan.strategy.maxUnavailable, { kind: 'fraction', value: 0.1 });
    assert.deepEqual(plan.failurePolicy.maxFailed, { kind: 'fraction', value: 0.125 });
    assert.equal(plan.gates[0]?.pauseMs, 500);
    assert.deepEqual(plan.gates[0]?.afterWaves, [1, 2]);
    assert.deepEqual(plan.gates[0]?.prometheus?.auth, { bearerTokenFile: '/var/run/token' });
    assert.deepEqual(plan.window, {
      timezone: 'Europe/Berlin',
      allow: [{ days: [1, 2, 3, 4, 5], startMinute: 22 * 60, endMinute: 5 * 60, text: 'Mon-Fri 22:00-05:00' }],
    });
    assert.deepEqual(plan.target.namespaces, ['web', 'shop'], 'namespace order kept: the record lives in the first');
  });

  test('waveSize normalizes to a size', () => {
    const plan = load(MINIMAL.replace('waves: [1, "10%", "100%"]', 'waveSize: "20%"'));
    assert.deepEqual(plan.strategy.waves, { kind: 'size', size: { kind: 'fraction', value: 0.2 } });
  });
});

describe('revision', () => {
  test('does not change with key order (any order of every mapping)', () => {
    const base = load(stringify(fullPlan())).revision;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        assert.equal(load(stringify(shuffleKeys(fullPlan(), seed))).revision, base);
      }),
      { numRuns: 40 },
    );
  });

  test('does not change with comments, YAML style, or the file name', () => {
    const base = load(MINIMAL).revision;
    const commented =
      '# a comment\n' + MINIMAL.replace('metadata: { name: web }', 'metadata:\n  name: web   # the name');
    assert.equal(load(commented, 'other/place.yaml').revision, base);
    assert.equal(load(JSON.stringify(minimalAsValue()), 'plan.json').revision, base, 'JSON is YAML too');
  });

  test('does not change when defaults are written out', () => {
    const explicit = MINIMAL.replace('namespace: web', 'namespaces: [web]').replace(
      'waves: [1, "10%", "100%"]',
      `waves: [1, "10.0%", "100%"]
    concurrency: 1
    maxUnavailable: 1
    order: name
    drainSeconds: 0
    podTimeout: 300s
    minReadySeconds: 0
  readinessGate: { conditionType: kwave.dev/in-place-ready, required: true }
  failurePolicy: { maxFailed: 0, rollback: failed, countNodeFailures: false }
  gates: []
  metrics: {}`,
    );
    assert.equal(load(explicit).revision, load(MINIMAL).revision);
  });

  test('keeps the client API rate limit (kubeApiQps / kubeApiBurst) in the plan but out of the revision', () => {
    const limited = load(
      MINIMAL.replace(
        'waves: [1, "10%", "100%"]',
        'waves: [1, "10%", "100%"]\n    kubeApiQps: 50.5\n    kubeApiBurst: 100',
      ),
    );
    assert.equal(limited.strategy.kubeApiQps, 50.5);
    assert.equal(limited.strategy.kubeApiBurst, 100);
    assert.equal(limited.revision, load(MINIMAL).revision);
    const bad = loadPlanText(
      MINIMAL.replace('waves: [1, "10%", "100%"]', 'waves: [1, "10%", "100%"]\n    kubeApiBurst: 0'),
      'plan.yaml',
    );
    assert.equal(bad.ok, false);
    if (!bad.ok) assert.match(bad.errors[0]!.message, /kubeApiBurst|1 or more/);
  });

  test('countNodeFailures at its default leaves the revision of plans written before it existed as it was', () => {
    // The hash of MINIMAL as kwave computed it before failurePolicy.countNodeFailures was added.
    assert.equal(load(MINIMAL).revision, MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES);
  });

  test('a plan without notify keeps the revision it had before spec.notify existed', () => {
    assert.equal(load(MINIMAL).revision, MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES);
    assert.deepEqual(load(MINIMAL).notify, []);
  });

  test("controlNamespace defaults to the record's namespace and is left out of the revision", () => {
    const plain = load(MINIMAL);
    assert.equal(plain.controlNamespace, plain.target.namespaces[0]);
    assert.equal(plain.revision, MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES);
    const apart = load(MINIMAL + '  controlNamespace: kwave-control\n');
    assert.equal(apart.controlNamespace, 'kwave-control');
    assert.equal(apart.revision, plain.revision);
    const bad = loadPlanText(MINIMAL + '  controlNamespace: Not_A_Namespace\n', 'plan.yaml');
    assert.equal(bad.ok, false);
  });

  test('notify is normalized (defaults, durations) but left out of the revision', () => {
    const withNotify = load(
      MINIMAL +
        '  notify:\n' +
        '    - { url: "https://hooks.example/kwave" }\n' +
        '    - { url: "http://chat.example/hook", on: [halted, completed], format: slack, timeout: 2s, auth: { bearerTokenEnv: CHAT_TOKEN } }\n',
    );
    assert.deepEqual(withNotify.notify, [
      {
        url: 'https://hooks.example/kwave',
        on: ['started', 'wave-completed', 'gate', 'halted', 'completed', 'rolled-back'],
        format: 'json',
        timeoutMs: 5000,
      },
      {
        url: 'http://chat.example/hook',
        on: ['halted', 'completed'],
        format: 'slack',
        timeoutMs: 2000,
        auth: { bearerTokenEnv: 'CHAT_TOKEN' },
      },
    ]);
    assert.equal(withNotify.revision, load(MINIMAL).revision, 'adding a receiver mid-rollout makes no new revision');
  });

  test('notify: an unknown event, a URL with credentials and an inline token are refused with their place', () => {
    const bad = (extra: string) => {
      const r = loadPlanText(MINIMAL + '  notify:\n' + extra, 'plan.yaml');
      assert.equal(r.ok, false, extra);
      return r.ok ? [] : r.errors;
    };
    const unknownEvent = bad('    - { url: "https://h.example/", on: [finished] }\n');
    assert.ok(
      unknownEvent.some(
        (e) =>
          e.pos.line === 14 &&
          e.pos.path === 'spec.notify[0].on[0]' &&
          /"halted", "completed" or "rolled-back", found "finished"/.test(e.message),
      ),
      JSON.stringify(unknownEvent),
    );
    const creds = bad('    - { url: "https://user:pw@h.example/" }\n');
    assert.ok(
      creds.some((e) => /without a user or password/.test(e.message)),
      JSON.stringify(creds),
    );
    const inline = bad('    - { url: "https://h.example/", auth: { token: abc } }\n');
    assert.ok(
      inline.some((e) => /tokens never go in a plan/.test(e.message)),
      JSON.stringify(inline),
    );
  });

  test('respectPodDisruptionBudgets at its default leaves existing revisions as they were; false is another revision', () => {
    assert.equal(load(MINIMAL).revision, MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES);
    const withField = (line: string) =>
      load(MINIMAL.replace('waves: [1, "10%", "100%"]', `waves: [1, "10%", "100%"]\n    ${line}`));
    assert.equal(withField('respectPodDisruptionBudgets: true').revision, MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES);
    assert.equal(withField('respectPodDisruptionBudgets: true').strategy.respectPodDisruptionBudgets, true);
    assert.notEqual(
      withField('respectPodDisruptionBudgets: false').revision,
      MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES,
    );
  });

  test('dryRun, consecutiveSuccessLimit and owners at their defaults leave the revision of plans written before them as it was', () => {
    assert.equal(load(MINIMAL_GATED).revision, MINIMAL_GATED_REVISION_BEFORE_DRY_RUN_AND_OWNERS);
    const explicit =
      MINIMAL_GATED.replace('count: 3 }', 'count: 3, dryRun: false, consecutiveSuccessLimit: 0 }') + '  owners: warn\n';
    assert.equal(load(explicit).revision, MINIMAL_GATED_REVISION_BEFORE_DRY_RUN_AND_OWNERS);
    for (const changed of [
      MINIMAL_GATED.replace('count: 3 }', 'count: 3, dryRun: true }'),
      MINIMAL_GATED.replace('count: 3 }', 'count: 3, consecutiveSuccessLimit: 2 }'),
      MINIMAL_GATED + '  owners: update\n',
    ]) {
      assert.notEqual(load(changed).revision, MINIMAL_GATED_REVISION_BEFORE_DRY_RUN_AND_OWNERS, changed);
    }
  });

  test('prePull at its default leaves existing revisions as they were; prePullConcurrency stays out of the revision', () => {
    const withField = (line: string) =>
      load(MINIMAL.replace('waves: [1, "10%", "100%"]', `waves: [1, "10%", "100%"]\n    ${line}`));
    assert.equal(withField('prePull: false').revision, MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES);
    assert.equal(
      withField('prePullConcurrency: 20').revision,
      MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES,
      'how many nodes pull at once is how fast, not what',
    );
    assert.equal(withField('prePullConcurrency: 20').strategy.prePullConcurrency, 20);
    assert.notEqual(withField('prePull: true').revision, MINIMAL_REVISION_BEFORE_COUNT_NODE_FAILURES);
  });

  test('does not change with the order of containers or selector values', () => {
    const a = fullPlan();
    const b = fullPlan();
    const spec = b.spec as {
      update: { containers: unknown[] };
      target: { selector: { matchExpressions: { values: string[] }[] } };
    };
    spec.update.containers.reverse();
    spec.target.selector.matchExpressions[0]?.values.reverse();
    assert.equal(load(stringify(a)).revision, load(stringify(b)).revision);
  });

  test('changes when the spec changes', () => {
    const base = load(MINIMAL).revision;
    const variants = [
      MINIMAL.replace('nginx:1.25.3', 'nginx:1.25.4'),
      MINIMAL.replace('"10%"', '"20%"'),
      MINIMAL.replace('namespace: web', 'namespace: shop'),
      MINIMAL.replace('app: web', 'app: api'),
      MINIMAL.replace('waves: [1, "10%", "100%"]', 'waves: [1, "10%", "100%"]\n    concurrency: 2'),
      MINIMAL + '  gates: [{ name: soak, pause: 1m }]\n',
      MINIMAL + '  failurePolicy: { rollback: all }\n',
      MINIMAL + '  failurePolicy: { countNodeFailures: true }\n',
    ];
    const revisions = variants.map((text) => load(text).revision);
    for (const r of revisions) assert.notEqual(r, base);
    assert.equal(new Set(revisions).size, variants.length, 'each change gives its own revision');
  });

  test('the plan name is not part of the revision (it names the rollout, the revision its content)', () => {
    assert.equal(load(MINIMAL.replace('name: web', 'name: web-2')).revision, load(MINIMAL).revision);
  });
});

/** MINIMAL as a JS value, for writing it as JSON (a subset of YAML). */
function minimalAsValue(): unknown {
  return {
    apiVersion: 'kwave.dev/v1alpha1',
    kind: 'RolloutPlan',
    metadata: { name: 'web' },
    spec: {
      strategy: { waves: [1, '10%', '100%'] },
      update: { containers: [{ image: 'nginx:1.25.3', name: 'nginx' }] },
      target: { selector: { matchLabels: { app: 'web' } }, namespace: 'web' },
    },
  };
}
