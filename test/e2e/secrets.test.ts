// The sentinel-token test: a real `kwave run` against the simulator, with two webhook gates whose
// bearer tokens come from an environment variable and from a file, served by a webhook that first
// refuses and echoes every request header back in its error body (as badly written services do).
// The token must reach the webhook — and appear nowhere else: not in stdout (-o json and text),
// stderr, the rollout record, the Lease, any Event, any pod, the metrics, or `kwave status`.
// Two notification receivers (spec.notify) take the same tokens the same way and get the same
// echoing refusal on their first request.
// URLs are secrets too (a Slack webhook's path is its credential): the gates' URLs come from an
// environment variable and a file, receivers' from the plan (Slack-style paths), a variable and a
// file; the refusal echoes the path asked for. No path, query or userinfo of them appears in any
// output, the record (which stores the plan's text), Events, metrics or notification bodies.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSim, type Sim } from '../../src/sim/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/kwave.js');
const ENV_TOKEN = 'SENTINEL-env-7b3f0a9d2c41e6f8';
const FILE_TOKEN = 'SENTINEL-file-e41d93c07a2b5f16';
/** The secret parts of Slack-style webhook URLs: in the plan, in an environment variable, in a file. */
const PLAN_URL_SECRET = 'XXXXSECRET';
const ENV_URL_SECRET = 'XXXXSECRETENV';
const FILE_URL_SECRET = 'XXXXSECRETFILE';
const SLACK = 'https://hooks.slack.com/services/T000/B000/XXXXSECRET';
const URL_SECRETS = [PLAN_URL_SECRET, ENV_URL_SECRET, FILE_URL_SECRET, 'T000/B000', '/services/'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  metrics: string;
}

describe('secrets: a sentinel token appears in no output of a run', () => {
  let sim: Sim;
  let dir: string;
  let kubeconfig: string;
  let hook: Server;
  let hookUrl: string;
  const authSeen: string[] = [];
  const notifyAuthSeen: string[] = [];
  const pathsSeen: string[] = [];
  const bodiesSeen: string[] = [];
  const attempts = new Map<string, number>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kwave-secrets-'));
    kubeconfig = join(dir, 'kubeconfig');
    sim = await startSim({ pods: 6, timeScale: 0.2, kubeconfigOut: kubeconfig });
    hook = createServer((req, res) => {
      authSeen.push(req.headers.authorization ?? '');
      pathsSeen.push(req.url ?? '');
      if (req.url?.startsWith('/notify')) notifyAuthSeen.push(req.headers.authorization ?? '');
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c));
      req.on('end', () => bodiesSeen.push(body));
      const n = (attempts.get(req.url ?? '') ?? 0) + 1;
      attempts.set(req.url ?? '', n);
      // The first attempt at each URL is refused with its path and the request headers echoed back.
      if (n === 1)
        res
          .writeHead(403, { 'Content-Type': 'text/plain' })
          .end(`refused ${req.url}; you sent ${JSON.stringify(req.headers)}`);
      else res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  });
  after(async () => {
    hook.closeAllConnections();
    await new Promise((r) => hook.close(r));
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** `kwave ARGS` with the token in its environment; scrapes its metrics once the run has ended. */
  function kwave(args: string[], scrape: boolean): Promise<Run> {
    return new Promise((resolve, reject) => {
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        KUBECONFIG: '',
        TICKET_TOKEN: ENV_TOKEN,
        TICKET_URL: `${hookUrl}/env/T000/B000/${ENV_URL_SECRET}`,
        SLACK_URL: `${hookUrl}/services/T000/B000/${ENV_URL_SECRET}`,
      };
      const child = spawn(process.execPath, [BIN, ...args, '--kubeconfig', kubeconfig], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let metrics = '';
      let scraping: Promise<void> | undefined;
      const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
      const tryScrape = () => {
        const url = /serving metrics on (\S+)/.exec(stderr)?.[1];
        // The run's last event is `rollout-end`; then the metrics linger until this one scrape.
        if (!scrape || scraping || !url || !stdout.includes('"event":"rollout-end"')) return;
        scraping = fetch(new URL('/metrics', url))
          .then(async (r) => void (metrics = await r.text()))
          .catch((err: unknown) => void (metrics = `scrape failed: ${String(err)}`));
      };
      child.stdout.setEncoding('utf8').on('data', (c: string) => ((stdout += c), tryScrape()));
      child.stderr.setEncoding('utf8').on('data', (c: string) => ((stderr += c), tryScrape()));
      child.on('error', reject);
      child.on('close', async (code) => {
        clearTimeout(timer);
        await scraping;
        resolve({ code, stdout, stderr, metrics });
      });
    });
  }

  test('run (-o json and text), status and the cluster hold no token; the webhook got both', async (t) => {
    const tokenFile = join(dir, 'ticket-token');
    await writeFile(tokenFile, `${FILE_TOKEN}\n`, { mode: 0o600 });
    const ticketUrlFile = join(dir, 'ticket-url');
    await writeFile(ticketUrlFile, `${hookUrl}/file/T000/B000/${FILE_URL_SECRET}\n`, { mode: 0o600 });
    const slackUrlFile = join(dir, 'slack-url');
    await writeFile(slackUrlFile, `${hookUrl}/services/T000/B000/${FILE_URL_SECRET}\n`, { mode: 0o600 });
    const plan = join(dir, 'plan.yaml');
    await writeFile(
      plan,
      `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: secrets }
spec:
  target: { namespace: default, selector: { matchLabels: { app: demo } } }
  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }
  strategy: { waves: [1, "50%", "100%"], concurrency: 2, podTimeout: 60s }
  gates:
    - name: ticket-env
      afterWaves: [1]
      webhook: { urlEnv: TICKET_URL, retries: 1, auth: { bearerTokenEnv: TICKET_TOKEN } }
    - name: ticket-file
      afterWaves: [2]
      webhook: { urlFile: ${ticketUrlFile}, retries: 1, auth: { bearerTokenFile: ${tokenFile} } }
  notify:
    - { url: "${hookUrl}/notify-env", auth: { bearerTokenEnv: TICKET_TOKEN } }
    - { url: "${hookUrl}/notify-file", format: slack, auth: { bearerTokenFile: ${tokenFile} } }
    - { url: "${hookUrl}/services/T000/B000/${PLAN_URL_SECRET}", format: slack }
    - { urlEnv: SLACK_URL, format: slack }
    - { urlFile: ${slackUrlFile}, format: slack }
    # Never sent to (no run here rolls back), but written in the plan: ${SLACK}
    - { url: "${SLACK}", format: slack, on: [rolled-back] }
`,
    );

    const t0 = Date.now();
    const json = await kwave(
      ['run', plan, '-o', 'json', '--metrics-address', '127.0.0.1:0', '--metrics-linger', '60s'],
      true,
    );
    assert.equal(json.code, 0, `kwave run exited ${json.code}\n${json.stderr}\n${json.stdout.slice(-3000)}`);
    t.diagnostic(`kwave run took ${Date.now() - t0} ms`);
    const again = await kwave(['run', plan, '--metrics-address', 'off'], false);
    assert.equal(again.code, 0, again.stderr);
    const statusJson = await kwave(['status', plan, '-o', 'json'], false);
    const statusText = await kwave(['status', plan], false);
    assert.equal(statusJson.code, 0, statusJson.stderr);

    // Not vacuous: both tokens reached the webhook, the echo came back, and the metrics were read.
    assert.ok(authSeen.includes(`Bearer ${ENV_TOKEN}`), `the webhook saw ${JSON.stringify(authSeen)}`);
    assert.ok(authSeen.includes(`Bearer ${FILE_TOKEN}`), `the webhook saw ${JSON.stringify(authSeen)}`);
    assert.ok(
      notifyAuthSeen.includes(`Bearer ${ENV_TOKEN}`) && notifyAuthSeen.includes(`Bearer ${FILE_TOKEN}`),
      `the notification receivers saw ${JSON.stringify(notifyAuthSeen)}`,
    );
    // The first notification to each was refused with the headers echoed: reported, without them.
    for (const path of [
      `/env/T000/B000/${ENV_URL_SECRET}`,
      `/file/T000/B000/${FILE_URL_SECRET}`,
      `/services/T000/B000/${PLAN_URL_SECRET}`,
      `/services/T000/B000/${ENV_URL_SECRET}`,
      `/services/T000/B000/${FILE_URL_SECRET}`,
    ])
      assert.ok(pathsSeen.includes(path), `the hook was asked for ${path}: ${JSON.stringify(pathsSeen)}`);
    assert.match(
      json.stderr,
      /notification started to notify\[0\] \(http:\/\/127\.0\.0\.1:\d+\/…\) failed: answered 403/,
    );
    assert.match(json.stderr, /notification started to notify\[3\] \(the URL in \$SLACK_URL\) failed: answered 403/);
    assert.match(
      json.stdout,
      /"gate":"ticket-env".*"message":"http:\/\/127\.0\.0\.1:\d+\/… answered 403 Forbidden: refused \[redacted\]/,
    );
    assert.match(json.metrics, /kwave_notifications_total\{plan="secrets",result="failed"\} [1-9]/);
    assert.match(json.metrics, /kwave_gate_checks_total/, json.metrics.slice(0, 500));

    const record = sim.store.list('configmaps', 'default').map((o) => JSON.stringify(o));
    const leases = sim.store.list('leases', 'default').map((o) => JSON.stringify(o));
    const events = sim.store.list('events', 'default').map((o) => JSON.stringify(o));
    const pods = sim.store.list('pods', 'default').map((o) => JSON.stringify(o));
    assert.ok(
      record.some((r) => r.includes('kwave-secrets')),
      'the record exists',
    );
    assert.ok(record.join('').includes('[redacted]'), 'the echoed header was recorded, redacted');
    const outputs: Record<string, string> = {
      'run -o json stdout': json.stdout,
      'run -o json stderr': json.stderr,
      'run (text) stdout': again.stdout,
      'run (text) stderr': again.stderr,
      'status -o json': statusJson.stdout + statusJson.stderr,
      'status (text)': statusText.stdout + statusText.stderr,
      metrics: json.metrics,
      'record ConfigMap': record.join('\n'),
      Lease: leases.join('\n'),
      Events: events.join('\n'),
      pods: pods.join('\n'),
      'notification bodies': bodiesSeen.join('\n'),
    };
    assert.ok(
      bodiesSeen.some((b) => b.includes('ticket-env')),
      'the notifications told of the gates',
    );
    assert.match(outputs['record ConfigMap']!, /https:\/\/hooks\.slack\.com\/…/, 'the stored plan text, redacted');
    for (const [where, text] of Object.entries(outputs)) {
      for (const secret of [ENV_TOKEN, FILE_TOKEN, 'SENTINEL', ...URL_SECRETS]) {
        assert.ok(
          !text.includes(secret),
          `${where} contains ${secret}:\n${text.slice(Math.max(0, text.indexOf(secret) - 300), text.indexOf(secret) + 300)}`,
        );
      }
    }
  });

  test('a kubeconfig token is never echoed nor sent over http://; --pushgateway with a password is refused', async () => {
    const plan = join(dir, 'small.yaml');
    await writeFile(
      plan,
      `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: small }
spec:
  target: { namespace: default, selector: { matchLabels: { app: demo } } }
  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }
`,
    );
    const user = (kc: string) => ['status', plan, '--kubeconfig', kc];
    const plainHttp = join(dir, 'plain-http.kubeconfig');
    await writeFile(
      plainHttp,
      `apiVersion: v1
kind: Config
clusters: [{ name: plain, cluster: { server: "http://127.0.0.1:9" } }]
users: [{ name: u, user: { token: ${ENV_TOKEN} } }]
contexts: [{ name: x, context: { cluster: plain, user: u } }]
current-context: x
`,
      { mode: 0o600 },
    );
    const refused = await kwaveRaw(user(plainHttp));
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /served over plain http:\/\/ and user "u" has a bearer token/);
    assert.match(refused.stderr, /--insecure-send-credentials-over-http/);
    // With the flag it goes on to connect (and finds nothing listening): the refusal was the flag's.
    const allowed = await kwaveRaw([...user(plainHttp), '--insecure-send-credentials-over-http']);
    assert.doesNotMatch(allowed.stderr, /kwave does not send credentials unencrypted/);
    assert.match(allowed.stderr, /sent unencrypted \(--insecure-send-credentials-over-http\)/);

    const malformed = join(dir, 'malformed.kubeconfig');
    await writeFile(malformed, `users:\n- name: u\n  user:\n    token: ${ENV_TOKEN}\n   x: y\n`, { mode: 0o600 });
    const bad = await kwaveRaw(user(malformed));
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /cannot read kubeconfig .*: invalid YAML at line 5, column 4/);

    const push = await kwaveRaw(['validate', plan, '--pushgateway', `http://kwave:${FILE_TOKEN}@127.0.0.1:9091`]);
    assert.equal(push.code, 2, push.stderr);
    assert.match(push.stderr, /--pushgateway: expected a URL without a user or password in it/);
    for (const r of [refused, allowed, bad, push]) {
      for (const secret of [ENV_TOKEN, FILE_TOKEN, 'SENTINEL'])
        assert.ok(!(r.stdout + r.stderr).includes(secret), `${secret} in:\n${r.stderr}`);
    }
  });

  /** `kwave ARGS` as given (its own --kubeconfig), with nothing else to wait for. */
  function kwaveRaw(args: string[]): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr, metrics: '' });
      });
    });
  }

  test('`kwave run --help` names both defaults of --metrics-address: loopback, every interface in a pod (resolved in test/unit/cli/inClusterDefaults.test.ts)', async () => {
    const help = await kwave(['run', '--help'], false);
    assert.match(
      help.stdout,
      /--metrics-address <host:port>[\s\S]*\(in a pod: 0\.0\.0\.0:9464\)[\s\S]*default: "127\.0\.0\.1:9464"/,
    );
  });
});
