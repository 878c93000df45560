// The plan text the record stores: webhook and receiver URLs redacted wherever they are written,
// everything else as it was, and still a plan that loads.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPlanText } from '../../../src/plan/load.js';
import { redactPlanText } from '../../../src/plan/redactPlanText.js';
import { newRecord, startRecord } from '../../../src/record/record.js';

const SLACK = 'https://hooks.slack.com/services/T000/B000/XXXXSECRET';
const TEXT = `# notify ${SLACK} on halts
apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: web }
spec:
  target: { namespace: web, selector: { matchLabels: { app: web } } }
  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }
  strategy: { waves: [1, "100%"] }
  gates:
    - name: ticket
      webhook: { url: "https://ci.example:8443/check?token=TOKENSECRET", retries: 1 }
    - name: errors
      prometheus: { address: "http://prometheus:9090/prom", query: "up", successCondition: "result > 0" }
  notify:
    - url: &slack ${SLACK}
      format: slack
    - url: *slack
      on: [halted]
    - url: |-
        https://chat.example/hooks/BLOCKSECRET
      timeout: 3s
    - { url: "https://plain.example" }
    - urlEnv: SLACK_URL
`;

describe('redactPlanText', () => {
  test('webhook and receiver URLs keep scheme://host[:port] only, at the field, its anchor and in comments', () => {
    const out = redactPlanText(TEXT);
    for (const secret of ['XXXXSECRET', 'TOKENSECRET', 'BLOCKSECRET', '/services/', '/check']) {
      assert.ok(!out.includes(secret), `${secret} in:\n${out}`);
    }
    assert.match(out, /url: "https:\/\/ci\.example:8443\/…", retries: 1/);
    assert.match(out, /url: &slack "https:\/\/hooks\.slack\.com\/…"/);
    assert.match(out, /url: \*slack/);
    assert.match(out, /url: "https:\/\/chat\.example\/…"\n {6}timeout: 3s/);
    assert.match(out, /^# notify https:\/\/hooks\.slack\.com\/… on halts$/m);
  });

  test('everything else is as written: the Prometheus address, a bare origin, urlEnv; and it still loads', () => {
    const out = redactPlanText(TEXT);
    assert.match(out, /address: "http:\/\/prometheus:9090\/prom"/);
    assert.match(out, /\{ url: "https:\/\/plain\.example" \}/);
    assert.match(out, /- urlEnv: SLACK_URL/);
    const before = loadPlanText(TEXT, 'p.yaml');
    const after = loadPlanText(out, 'p.yaml');
    assert.ok(before.ok, JSON.stringify(!before.ok && before.errors));
    assert.ok(after.ok, JSON.stringify(!after.ok && after.errors));
    assert.equal(after.plan.notify[3]?.url, 'https://plain.example');
    assert.equal(after.plan.strategy.concurrency, before.plan.strategy.concurrency);
  });

  test('text without URLs is returned as it is; text that is not a plan has every URL redacted', () => {
    assert.equal(redactPlanText('kind: RolloutPlan\n'), 'kind: RolloutPlan\n');
    assert.equal(redactPlanText(`a: [\n${SLACK}`), 'a: [\nhttps://hooks.slack.com/…');
  });

  test('the record stores the redacted text, new or continued', () => {
    const input = { plan: 'web', revision: 'r1', planText: TEXT, holder: 'me', now: '2026-01-01T00:00:00.000Z' };
    const fresh = newRecord(input);
    assert.ok(!fresh.planText.includes('XXXXSECRET'));
    const continued = startRecord({ ...fresh, planText: 'old' }, input);
    assert.equal(continued.planText, fresh.planText);
  });
});
