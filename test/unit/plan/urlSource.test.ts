// A webhook gate's and a notification receiver's URL: `url`, `urlEnv` or `urlFile`, exactly one,
// checked with file:line:col; the normalized plan keeps only the one given.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPlanText } from '../../../src/plan/load.js';

const plan = (webhook: string, notify: string) => `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: web }
spec:
  target: { namespace: web, selector: { matchLabels: { app: web } } }
  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }
  strategy: { waves: [1, "100%"] }
  gates:
    - name: ticket
      webhook: ${webhook}
  notify:
    - ${notify}
`;

describe('url, urlEnv and urlFile in the plan', () => {
  test('each of the three is taken, for gates and receivers alike', () => {
    const r = loadPlanText(
      plan('{ urlEnv: TICKET_URL }', '{ urlFile: /run/secrets/slack/url, format: slack }'),
      'p.yaml',
    );
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    assert.deepEqual(r.plan.gates[0]?.webhook, { urlEnv: 'TICKET_URL', timeoutMs: 10_000, retries: 2 });
    assert.equal(r.plan.notify[0]?.urlFile, '/run/secrets/slack/url');
    assert.equal('url' in r.plan.notify[0]!, false);
    const inline = loadPlanText(plan('{ url: "https://ci.example/check" }', '{ urlEnv: SLACK_URL }'), 'p.yaml');
    assert.ok(inline.ok);
    assert.deepEqual(inline.plan.gates[0]?.webhook, { url: 'https://ci.example/check', timeoutMs: 10_000, retries: 2 });
    assert.deepEqual(inline.plan.notify[0]?.urlEnv, 'SLACK_URL');
  });

  test('the revision of a plan with an inline url is what it was (urlEnv and urlFile add no fields to it)', () => {
    const a = loadPlanText(plan('{ url: "https://ci.example/check" }', '{ url: "https://n.example" }'), 'p.yaml');
    const b = loadPlanText(plan('{ urlEnv: TICKET_URL }', '{ url: "https://n.example" }'), 'p.yaml');
    assert.ok(a.ok && b.ok);
    assert.notEqual(a.plan.revision, b.plan.revision);
    // The revision this plan had before urlEnv and urlFile existed.
    assert.equal(a.plan.revision, 'c3be06451b');
  });

  test('two sources, none, or a bad name are refused at the place, without repeating the URL', () => {
    const SECRET = 'https://hooks.slack.com/services/T000/B000/XXXXSECRET';
    for (const [webhook, notify, line, path, expected] of [
      [
        `{ url: "${SECRET}", urlEnv: A }`,
        '{ urlEnv: B }',
        10,
        'spec.gates[0].webhook.urlEnv',
        /only one of the fields "url", "urlEnv" or "urlFile", found "url" and "urlEnv"/,
      ],
      [
        '{ timeout: 5s }',
        '{ urlEnv: B }',
        10,
        'spec.gates[0].webhook',
        /one of the fields "url", "urlEnv" or "urlFile", found none/,
      ],
      [
        '{ urlEnv: A }',
        '{ format: slack }',
        12,
        'spec.notify[0]',
        /one of the fields "url", "urlEnv" or "urlFile", found none/,
      ],
      ['{ urlEnv: A }', '{ urlEnv: "not a name" }', 12, 'spec.notify[0].urlEnv', /environment variable name/],
      ['{ urlEnv: A }', '{ urlFile: "" }', 12, 'spec.notify[0].urlFile', /a file path/],
      ['{ urlEnv: A }', `{ urlEnv: B, urlFile: /x }`, 12, 'spec.notify[0].urlFile', /found "urlEnv" and "urlFile"/],
    ] as const) {
      const r = loadPlanText(plan(webhook, notify), 'p.yaml');
      assert.equal(r.ok, false, `${webhook} ${notify}`);
      if (r.ok) continue;
      assert.ok(
        r.errors.some((e) => e.pos.line === line && e.pos.col > 0 && e.pos.path === path && expected.test(e.message)),
        `${webhook} ${notify}: ${JSON.stringify(r.errors)}`,
      );
      assert.ok(!JSON.stringify(r.errors).includes('XXXXSECRET'), 'the URL is not repeated in the error');
    }
  });
});
