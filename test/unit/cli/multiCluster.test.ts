// The multi-cluster pieces of the CLI that need no cluster: the plan's exit code from its
// clusters', a cluster's JSON events (the `cluster` field right after `plan`), and the kubeconfig
// with a context per cluster.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { planExitCode } from '../../../src/session/runPlan.js';
import { jsonLine } from '../../../src/cli/output/json.js';
import { renderMultiKubeconfig } from '../../../src/sim/apiserver/kubeconfig.js';

describe('planExitCode', () => {
  const cases: { name: string; codes: number[]; expected: number }[] = [
    { name: 'all done: 0', codes: [0, 0, 0], expected: 0 },
    { name: 'a halt anywhere wins: 3', codes: [0, 3, 3], expected: 3 },
    { name: 'a halt wins over an interruption', codes: [4, 3], expected: 3 },
    { name: 'interrupted: 4', codes: [0, 4, 4], expected: 4 },
    { name: 'nodes down in one cluster: 5', codes: [0, 5, 0], expected: 5 },
    { name: 'one cluster: its own code', codes: [5], expected: 5 },
  ];
  for (const c of cases) test(c.name, () => assert.equal(planExitCode(c.codes), c.expected));
});

describe('a multi-cluster event as JSON', () => {
  test('says its cluster right after the plan; a one-cluster event has no cluster field', () => {
    const line = jsonLine({
      time: 't',
      plan: 'web',
      cluster: 'eu-1',
      event: 'wave-start',
      wave: 1,
      waves: 2,
      pods: 1,
      target: 1,
    });
    assert.equal(
      line,
      '{"time":"t","plan":"web","cluster":"eu-1","event":"wave-start","wave":1,"waves":2,"pods":1,"target":1}',
    );
    assert.doesNotMatch(
      jsonLine({ time: 't', plan: 'web', event: 'wave-start', wave: 1, waves: 2, pods: 1, target: 1 }),
      /cluster/,
    );
  });
});

describe('renderMultiKubeconfig', () => {
  test('a cluster, a user and a context per server, the first current', () => {
    const kc = parse(
      renderMultiKubeconfig([
        { server: 'https://127.0.0.1:1', caPem: 'A', token: 'ta', context: 'sim-1' },
        { server: 'https://127.0.0.1:2', caPem: 'B', token: 'tb', context: 'sim-2' },
      ]),
    ) as {
      clusters: { name: string; cluster: { server: string } }[];
      users: { name: string; user: { token: string } }[];
      contexts: { name: string; context: { cluster: string; user: string } }[];
      'current-context': string;
    };
    assert.deepEqual(
      kc.contexts.map((c) => [c.name, c.context.cluster, c.context.user]),
      [
        ['sim-1', 'sim-1', 'sim-1-admin'],
        ['sim-2', 'sim-2', 'sim-2-admin'],
      ],
    );
    assert.deepEqual(
      kc.clusters.map((c) => c.cluster.server),
      ['https://127.0.0.1:1', 'https://127.0.0.1:2'],
    );
    assert.deepEqual(
      kc.users.map((u) => u.user.token),
      ['ta', 'tb'],
    );
    assert.equal(kc['current-context'], 'sim-1');
  });
  test('refuses a context name given twice, and no cluster at all', () => {
    assert.throws(
      () =>
        renderMultiKubeconfig([
          { server: 'a', caPem: 'A', token: 't' },
          { server: 'b', caPem: 'B', token: 't' },
        ]),
      /context "kwave-sim" given twice/,
    );
    assert.throws(() => renderMultiKubeconfig([]), /no cluster/);
  });
});
