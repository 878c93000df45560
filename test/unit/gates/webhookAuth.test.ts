// The webhook gate's bearer token, against a loopback HTTP server that echoes what it received:
// the token goes out in the Authorization header, read from the environment or a file at each
// attempt, and never comes back in a measurement or message, even when the server echoes it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redactToken } from '../../../src/gates/bearerToken.js';
import { callWebhookGate } from '../../../src/gates/webhook.js';
import { loadPlanText } from '../../../src/plan/load.js';
import type { WebhookGate } from '../../../src/plan/types.js';

const TOKEN = 'kwave-test-token-6f1d2c9a';

describe('webhook gate auth', () => {
  let server: Server;
  let url: string;
  let dir: string;
  const seen: (string | undefined)[] = [];
  let status = 200;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kwave-webhook-auth-'));
    server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      req.resume();
      // A badly written service that echoes the request headers in its error body.
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(`denied: ${JSON.stringify(req.headers)}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/check`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  const gate = (auth: WebhookGate['auth']): WebhookGate => ({
    url,
    timeoutMs: 5_000,
    retries: 1,
    ...(auth ? { auth } : {}),
  });
  const payload = { plan: 'web', revision: 'r1', wave: 1, phase: 'Progressing' };
  /** A fetch answering 403 with `pad` characters, then the Authorization header it was sent. */
  const echoAfter =
    (pad: number): typeof fetch =>
    async (_url, init) =>
      new Response(`${'x'.repeat(pad)} ${String((init?.headers as Record<string, string>).Authorization)}`, {
        status: 403,
      });
  const noSleep = async () => true;

  test('the token from an environment variable goes out as a bearer token and is redacted from echoes', async () => {
    seen.length = 0;
    status = 403;
    const out = await callWebhookGate('ticket', gate({ bearerTokenEnv: 'TICKET_TOKEN' }), payload, {
      env: { TICKET_TOKEN: `${TOKEN}\n` },
      sleep: noSleep,
    });
    assert.equal(out.result, 'failed');
    assert.deepEqual(seen, [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
    const everything = JSON.stringify(out);
    assert.ok(!everything.includes(TOKEN), everything);
    assert.match(everything, /\[redacted\]/);
  });

  test('an echo cut short by the 200-character limit leaves no part of the token (redacted before the cut)', async () => {
    status = 403;
    // The 200-character cut falls before, inside and after the token.
    for (const pad of [150, 160, 170, 180]) {
      const out = await callWebhookGate(
        'ticket',
        { ...gate({ bearerTokenEnv: 'TICKET_TOKEN' }), retries: 0 },
        payload,
        { env: { TICKET_TOKEN: TOKEN }, sleep: noSleep, fetch: echoAfter(pad) },
      );
      assert.ok(!JSON.stringify(out).includes(TOKEN.slice(0, 12)), JSON.stringify(out));
    }
  });

  test('the token from a file is read at each attempt (a rotated Secret is picked up)', async () => {
    seen.length = 0;
    status = 500;
    const file = join(dir, 'token');
    await writeFile(file, 'first-token-aaaa');
    const out = await callWebhookGate('ticket', gate({ bearerTokenFile: file }), payload, {
      sleep: async () => {
        await writeFile(file, 'second-token-bbbb');
        return true;
      },
    });
    assert.equal(out.result, 'failed');
    assert.deepEqual(seen, ['Bearer first-token-aaaa', 'Bearer second-token-bbbb']);
    assert.ok(!JSON.stringify(out).includes('second-token-bbbb'));
  });

  test('a missing token fails the gate at once, naming the variable, without a request', async () => {
    seen.length = 0;
    status = 200;
    const out = await callWebhookGate('ticket', gate({ bearerTokenEnv: 'NOT_SET_ANYWHERE' }), payload, {
      env: {},
      sleep: noSleep,
    });
    assert.equal(out.result, 'failed');
    assert.match(out.message, /environment variable NOT_SET_ANYWHERE is not set or empty/);
    assert.deepEqual(seen, []);
    const missing = await callWebhookGate('ticket', gate({ bearerTokenFile: join(dir, 'nope') }), payload, {
      sleep: noSleep,
    });
    assert.match(missing.message, /cannot read .*nope: ENOENT/);
  });

  test('without auth no Authorization header is sent', async () => {
    seen.length = 0;
    status = 200;
    const out = await callWebhookGate('ticket', gate(undefined), payload, { sleep: noSleep });
    assert.equal(out.result, 'passed');
    assert.deepEqual(seen, [undefined]);
  });

  test('redactToken leaves text without the token alone and ignores empty tokens', () => {
    assert.equal(redactToken('a abcd b abcd', 'abcd'), 'a [redacted] b [redacted]');
    assert.equal(redactToken('nothing here', 'abcd'), 'nothing here');
    assert.equal(redactToken('x', ''), 'x');
  });
});

describe('webhook auth in the plan', () => {
  const plan = (auth: string) => `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: web }
spec:
  target: { namespace: web, selector: { matchLabels: { app: web } } }
  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }
  strategy: { waves: [1, "100%"] }
  gates:
    - name: ticket
      webhook:
        url: https://ci.example/check
        auth: ${auth}
`;

  test('bearerTokenEnv and bearerTokenFile are taken', () => {
    const env = loadPlanText(plan('{ bearerTokenEnv: TICKET_TOKEN }'), 'p.yaml');
    assert.ok(env.ok);
    if (env.ok) assert.deepEqual(env.plan.gates[0]?.webhook?.auth, { bearerTokenEnv: 'TICKET_TOKEN' });
    const file = loadPlanText(plan('{ bearerTokenFile: /var/run/secrets/ticket/token }'), 'p.yaml');
    assert.ok(file.ok);
  });

  test('a token written into the plan, both sources, or neither are refused with the place', () => {
    for (const [auth, expected] of [
      ['{ bearerToken: s3cr3t }', /unknown field "bearerToken".*tokens never go in a plan/],
      ['{ bearerTokenEnv: A, bearerTokenFile: /b }', /bearerTokenEnv.*bearerTokenFile/],
      ['{}', /found neither/],
      ['{ bearerTokenEnv: "not a name" }', /environment variable name/],
    ] as const) {
      const r = loadPlanText(plan(auth), 'p.yaml');
      assert.equal(r.ok, false, auth);
      if (!r.ok) {
        assert.ok(
          r.errors.some(
            (e) => e.pos.line === 12 && e.pos.path.startsWith('spec.gates[0].webhook.auth') && expected.test(e.message),
          ),
          `${auth}: ${JSON.stringify(r.errors)}`,
        );
        assert.ok(!JSON.stringify(r.errors).includes('s3cr3t'), 'the refused token is not repeated in the error');
      }
    }
  });
});
