// The webhook gate against a loopback HTTP server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callWebhookGate } from '../../../src/gates/webhook.js';
import type { Sleep } from '../../../src/sleep.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

describe('webhook gate', () => {
  let server: Server;
  let base: string;
  let handler: Handler = (_req, _body, res) => res.end();
  const received: { method?: string; type?: string; body: string }[] = [];

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ method: req.method, type: req.headers['content-type'], body });
        handler(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const payload = { plan: 'web', revision: 'r1', wave: 2, phase: 'Progressing' };
  const sleeps: number[] = [];
  const sleep: Sleep = async (ms) => {
    sleeps.push(ms);
    return true;
  };
  const reset = (h: Handler) => {
    handler = h;
    received.length = 0;
    sleeps.length = 0;
  };

  test('POSTs {plan, revision, wave, phase} as JSON; 2xx passes', async () => {
    reset((_req, _body, res) => res.writeHead(204).end());
    const out = await callWebhookGate(
      'change-ticket',
      { url: `${base}/check?token=abc`, timeoutMs: 2000, retries: 2 },
      payload,
      { sleep },
    );
    assert.equal(out.result, 'passed');
    assert.equal(received.length, 1);
    assert.equal(received[0]!.method, 'POST');
    assert.equal(received[0]!.type, 'application/json');
    assert.deepEqual(JSON.parse(received[0]!.body), payload);
    assert.equal(out.message, `change-ticket: ${base}/… answered 204 No Content`);
    assert.deepEqual(
      out.measurements.map((m) => [m.phase, m.value]),
      [['successful', 204]],
    );
  });

  test('5xx is retried with doubling back-off, then fails naming the answer', async () => {
    reset((_req, _body, res) => res.writeHead(503, { 'Content-Type': 'text/plain' }).end('ticket system down'));
    const out = await callWebhookGate('change-ticket', { url: `${base}/check`, timeoutMs: 2000, retries: 3 }, payload, {
      sleep,
      backoffMs: 100,
    });
    assert.equal(out.result, 'failed');
    assert.equal(received.length, 4);
    assert.deepEqual(sleeps, [100, 200, 400]);
    assert.equal(
      out.message,
      `change-ticket: webhook ${base}/… answered 503 Service Unavailable: ticket system down (after 4 attempts)`,
    );
  });

  test('a retry that gets a 2xx passes', async () => {
    let n = 0;
    reset((_req, _body, res) => res.writeHead(++n < 2 ? 502 : 200).end());
    const out = await callWebhookGate('g', { url: base, timeoutMs: 2000, retries: 3 }, payload, { sleep });
    assert.equal(out.result, 'passed');
    assert.deepEqual(
      out.measurements.map((m) => m.value),
      [502, 200],
    );
  });

  test('a 4xx refusal fails too, after the retries; retries 0 asks once', async () => {
    reset((_req, _body, res) => res.writeHead(403).end('no approved change ticket'));
    const out = await callWebhookGate('change-ticket', { url: base, timeoutMs: 2000, retries: 0 }, payload, { sleep });
    assert.equal(out.result, 'failed');
    assert.equal(received.length, 1);
    assert.deepEqual(sleeps, []);
    assert.equal(out.message, `change-ticket: webhook ${base} answered 403 Forbidden: no approved change ticket`);
  });

  test('no answer within the timeout fails (retried like an error)', async () => {
    reset(() => {
      /* never answers */
    });
    const out = await callWebhookGate('g', { url: base, timeoutMs: 50, retries: 1 }, payload, { sleep });
    assert.equal(out.result, 'failed');
    assert.deepEqual(
      out.measurements.map((m) => [m.phase, m.value]),
      [
        ['error', null],
        ['error', null],
      ],
    );
    assert.match(out.message, /no answer within 50 ms \(after 2 attempts\)$/);
  });

  test('a refused connection fails', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const out = await callWebhookGate(
      'g',
      { url: `http://127.0.0.1:${port}/x`, timeoutMs: 1000, retries: 0 },
      payload,
      { sleep },
    );
    assert.equal(out.result, 'failed');
    assert.match(out.message, /^g: webhook http:\/\/127\.0\.0\.1:\d+\/…: connect ECONNREFUSED/);
  });

  test('an abort while waiting to retry ends interrupted', async () => {
    reset((_req, _body, res) => res.writeHead(500).end());
    const ac = new AbortController();
    const aborting: Sleep = async () => {
      ac.abort();
      return false;
    };
    const out = await callWebhookGate('g', { url: base, timeoutMs: 1000, retries: 3 }, payload, {
      sleep: aborting,
      signal: ac.signal,
    });
    assert.equal(out.result, 'interrupted');
  });
});
