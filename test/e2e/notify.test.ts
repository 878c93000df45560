// Notifications (spec.notify) through the real `kwave run`: a rollout that passes its first gate
// and halts on its second (a webhook answering 500), then rolls back, with four receivers: JSON
// (with a bearer token from the environment), Slack, one answering 500 and one never answering.
// The first two get every event, in order; the other two are retried, given up and counted, and
// the rollout is neither held up nor failed by them (the hanging one's timeout is longer than the
// whole run would take if sending blocked it).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { stringify } from 'yaml';
import { startFleet } from './helpers/rolloutCli.js';
import { BIN, CHILD_LIMITS, ROOT } from './helpers/kwaveBin.js';
import { startReceiver, type ReceiverMode } from './helpers/receiver.js';
import { OLD_ID } from './helpers/images.js';

const TOKEN = 'SENTINEL-notify-e2e-9d41c7a0b2';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  metrics: string;
}

/** `kwave run` with metrics on a free port; scraped once the last notification result is reported (the flush has ended). */
function runKwave(args: string[], env: NodeJS.ProcessEnv, flushed: (stderr: string) => boolean): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...CHILD_LIMITS,
    });
    let stdout = '';
    let stderr = '';
    let metrics = '';
    let scraping: Promise<void> | undefined;
    const tryScrape = () => {
      const url = /serving metrics on (\S+)/.exec(stderr)?.[1];
      if (scraping || !url || !stdout.includes('"event":"rollout-end"') || !flushed(stderr)) return;
      scraping = fetch(new URL('/metrics', url))
        .then(async (r) => void (metrics = await r.text()))
        .catch((err: unknown) => void (metrics = `scrape failed: ${String(err)}`));
    };
    child.stdout.setEncoding('utf8').on('data', (c: string) => ((stdout += c), tryScrape()));
    child.stderr.setEncoding('utf8').on('data', (c: string) => ((stderr += c), tryScrape()));
    child.on('error', reject);
    child.on('close', async (code) => {
      await scraping;
      resolve({ code, stdout, stderr, metrics });
    });
  });
}

const counter = (metrics: string, result: string): number =>
  Number(
    new RegExp(`kwave_notifications_total\\{plan="notify",result="${result}"\\} (\\d+)`).exec(metrics)?.[1] ?? NaN,
  );

describe('kwave run: notifications', () => {
  test('a run with a halt: every event reaches the JSON and Slack receivers; failing receivers are retried, counted and never block', async (t) => {
    const fleet = await startFleet({ pods: 6, timeScale: 0.3 });
    const gateHook = await startReceiver(((req, res) =>
      res.writeHead(req.url === '/fail' ? 500 : 200).end('gate')) satisfies ReceiverMode);
    const json = await startReceiver('ok');
    const slack = await startReceiver('ok');
    const failing = await startReceiver('fail');
    const hanging = await startReceiver('hang');
    try {
      const plan = await fleet.writePlan(
        'notify.yaml',
        stringify({
          apiVersion: 'kwave.dev/v1alpha1',
          kind: 'RolloutPlan',
          metadata: { name: 'notify' },
          spec: {
            target: { namespace: 'default', selector: { matchLabels: { app: 'demo' } } },
            update: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] },
            strategy: { waves: [1, '50%', '100%'], concurrency: 2, podTimeout: '60s' },
            failurePolicy: { rollback: 'all' },
            gates: [
              { name: 'ticket-1', afterWaves: [1], webhook: { url: `${gateHook.url}/ok`, retries: 0 } },
              { name: 'ticket-2', afterWaves: [2], webhook: { url: `${gateHook.url}/fail`, retries: 0 } },
            ],
            notify: [
              { url: `${json.url}/kwave`, auth: { bearerTokenEnv: 'NOTIFY_TOKEN' } },
              { url: `${slack.url}/services/T0/B0/SECRETPATH`, format: 'slack' },
              { url: failing.url, on: ['started'], timeout: '2s' },
              { url: hanging.url, timeout: '10m' },
            ],
          },
        }),
      );
      const env = { ...process.env, KUBECONFIG: '', NOTIFY_TOKEN: TOKEN };
      // The flush has ended once the hanging receiver's notifications are reported dropped (all 7).
      const flushed = (stderr: string) =>
        (stderr.match(/to notify\[3\] \(http:\/\/127\.0\.0\.1:\d+\) dropped/g) ?? []).length === 7;
      const ran = await runKwave(
        [
          'run',
          plan,
          '--kubeconfig',
          fleet.kubeconfig,
          '-o',
          'json',
          '--metrics-address',
          '127.0.0.1:0',
          '--metrics-linger',
          '120s',
        ],
        env,
        flushed,
      );

      assert.equal(ran.code, 3, `exit ${ran.code}\n${ran.stderr}\n${ran.stdout.slice(-2000)}`);
      const end = ran.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; phase?: string })
        .find((e) => e.event === 'rollout-end');
      assert.equal(end?.phase, 'RolledBack');
      for (const [name, pod] of await fleet.pods()) assert.equal(pod.imageID, OLD_ID, `${name} rolled back`);

      const expected = ['started', 'wave-completed', 'gate', 'wave-completed', 'gate', 'halted', 'rolled-back'];
      const bodies = json.bodies() as {
        kind: string;
        event: string;
        plan: string;
        revision: string;
        summary: string;
        severity: string;
        detail: { event: string };
      }[];
      assert.deepEqual(
        bodies.map((b) => b.event),
        expected,
        JSON.stringify(bodies, null, 1),
      );
      assert.ok(
        bodies.every(
          (b) => b.kind === 'kwave.dev/notification' && b.plan === 'notify' && /^[0-9a-f]{10}$/.test(b.revision),
        ),
      );
      assert.deepEqual(
        bodies.map((b) => b.detail.event),
        ['rollout-start', 'wave-end', 'gate-end', 'wave-end', 'gate-end', 'halt', 'rollout-end'],
      );
      assert.match(bodies[4]!.summary, /gate ticket-2 after wave 2 of plan notify failed/);
      assert.ok(
        json.received.every((r) => r.authorization === `Bearer ${TOKEN}` && r.path === '/kwave'),
        'the token went with every request',
      );
      const slackBodies = slack.bodies() as { text: string; blocks: { type: string }[] }[];
      assert.equal(slackBodies.length, expected.length);
      assert.ok(
        slackBodies.every(
          (b, i) =>
            b.text.startsWith(`kwave notify: ${expected[i]}: `) &&
            b.blocks.map((x) => x.type).join() === 'section,context',
        ),
        JSON.stringify(slackBodies[0]),
      );

      // The failing receiver: its notification tried 3 times (back-off 1 s, 2 s), then counted failed.
      // (Only `started`: a later one's retries could outlast the bounded flush on a fast run, and be dropped.)
      assert.equal(failing.received.length, 3, `the 500 receiver got ${failing.received.length} requests`);
      assert.match(
        ran.stderr,
        /notification started to notify\[2\] \(http:\/\/127\.0\.0\.1:\d+\) failed: answered 500 Internal Server Error \(after 3 attempts\)/,
      );
      // The hanging receiver held the first request throughout; the rest waited and were dropped at the bounded flush.
      assert.equal(hanging.received.length, 1);
      assert.equal(
        counter(ran.metrics, 'sent'),
        14,
        ran.metrics
          .split('\n')
          .filter((l) => l.includes('notifications'))
          .join('\n'),
      );
      assert.equal(counter(ran.metrics, 'failed'), 1);
      assert.equal(counter(ran.metrics, 'dropped'), 7);

      // Neither the token nor the Slack URL's secret path appears in anything kwave printed or stored.
      const record = JSON.stringify(await fleet.status(plan));
      for (const [where, text] of Object.entries({
        stdout: ran.stdout,
        stderr: ran.stderr,
        metrics: ran.metrics,
        status: record,
      })) {
        assert.ok(!text.includes(TOKEN), `${where} holds the token`);
        if (where !== 'status') assert.ok(!text.includes('SECRETPATH'), `${where} holds the Slack URL's path`);
      }
      for (const b of json.received) t.diagnostic(`json body: ${b.body}`);
      for (const b of slack.received) t.diagnostic(`slack body: ${b.body}`);
    } finally {
      await Promise.all([gateHook.close(), json.close(), slack.close(), failing.close(), hanging.close()]);
      await fleet.close();
    }
  });
});
