// --kube-api-qps / --kube-api-burst: checked like every flag, and over the plan's figures.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../../src/cli/main.js';
import { connectFor } from '../../../src/session/connection.js';
import { loadPlanText } from '../../../src/plan/load.js';

function capture() {
  let out = '';
  let err = '';
  return {
    io: { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} },
    text: () => ({ out, err }),
  };
}

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

const PLAN = `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: web }
spec:
  target: { namespace: web, selector: { matchLabels: { app: web } } }
  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }
  strategy: { waves: ["100%"], kubeApiQps: 50, kubeApiBurst: 3 }
`;

describe('client-side API rate limit flags', () => {
  for (const [flag, value] of [
    ['--kube-api-qps', '-1'],
    ['--kube-api-qps', 'fast'],
    ['--kube-api-burst', '0'],
    ['--kube-api-burst', '2.5'],
  ]) {
    it(`${flag} ${value} is a usage error (exit 2) naming the flag`, async () => {
      const c = capture();
      const code = await main(['validate', 'plan.yaml', flag!, value!], c.io);
      assert.equal(code, 2);
      assert.match(c.text().err, new RegExp(`${flag}: expected`));
    });
  }

  it('the flag wins over the plan, figure by figure; the plan over the default', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kwave-ratelimit-'));
    try {
      const kubeconfig = path.join(dir, 'config');
      writeFileSync(kubeconfig, KUBECONFIG);
      const loaded = loadPlanText(PLAN, 'plan.yaml');
      assert.ok(loaded.ok);
      const common = { kubeconfig, output: 'text' as const, metricsAddress: 'off' };
      assert.deepEqual(connectFor(common, {}, loaded.plan).rateLimit, { qps: 50, burst: 3 });
      assert.deepEqual(connectFor({ ...common, kubeApiQps: 7 }, {}, loaded.plan).rateLimit, { qps: 7, burst: 3 });
      assert.deepEqual(connectFor({ ...common, kubeApiBurst: 9 }, {}).rateLimit, { qps: 5000, burst: 9 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
