// The wire client reuses client-node's connection options (auth headers, agent) for a moment
// instead of rebuilding them per request; an Unauthorized answer must drop them at once, so a
// rotated credential is taken up by the very next request. Its requests go through undici's pool:
// a slow answer is a Timeout and closing the client fails the requests still open, as KubeErrors
// the retries know. Against the simulated API server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { WireClient } from '../../../src/cluster/wire.js';
import { lineSplitter, peekResourceVersion } from '../../../src/cluster/wireBytes.js';
import { rawHeaderRecord } from '../../../src/cluster/wireExchange.js';
import { startSim } from '../../../src/sim/index.js';
import { kwaveVersion } from '../../../src/version.js';

describe('lineSplitter', () => {
  test('cuts lines on newline bytes, across chunks and inside a split UTF-8 character, and ends with the unfinished one', () => {
    const lines: string[] = [];
    const split = lineSplitter((l) => lines.push(l.toString('utf8')));
    const bytes = Buffer.from('{"a":"é€😀"}\n\n{"b":1}\n{"c":"tail"}', 'utf8');
    // Every cut, one byte at a time too: inside each multi-byte character and at each newline.
    for (let i = 0; i < bytes.length; i++) split.push(bytes.subarray(i, i + 1));
    split.end();
    assert.deepEqual(lines, ['{"a":"é€😀"}', '', '{"b":1}', '{"c":"tail"}']);
    const whole: string[] = [];
    const once = lineSplitter((l) => whole.push(l.toString('utf8')));
    once.push(bytes);
    once.end();
    assert.deepEqual(whole, lines);
  });
});

describe('rawHeaderRecord', () => {
  test("undici's raw headers become single-valued ones with lower-case names; a repeated one is not read", () => {
    const raw = ['Retry-After', '7', 'Content-Type', 'application/json', 'Warning', 'a', 'warning', 'b'].map((t) =>
      Buffer.from(t, 'latin1'),
    );
    assert.deepEqual(rawHeaderRecord(raw), { 'retry-after': '7', 'content-type': 'application/json' });
    assert.deepEqual(rawHeaderRecord([]), {});
  });
});

describe('peekResourceVersion', () => {
  const peek = (s: string) => peekResourceVersion(Buffer.from(s));
  test("finds the object's version in a watch line without parsing it", () => {
    const line = JSON.stringify({
      type: 'MODIFIED',
      object: {
        kind: 'Pod',
        metadata: { name: 'a', resourceVersion: '1234', annotations: { x: '{"metadata":{"resourceVersion":"9"}}' } },
      },
    });
    assert.equal(peek(line), '1234');
    // In a string value the quotes are escaped: an annotation holding JSON cannot be taken for the key.
    const later = JSON.stringify({
      type: 'MODIFIED',
      object: { metadata: { annotations: { x: '{"resourceVersion":"9"}' }, resourceVersion: '77' } },
    });
    assert.equal(peek(later), '77');
    assert.equal(peek('{"type":"ERROR","object":{"kind":"Status","code":410}}'), undefined);
    assert.equal(peek('{"object":{"metadata":{"resourceVersion":"opaque-token"}}}'), undefined);
    assert.equal(peek('{"object":{"metadata":{"resourceVersion":"12'), undefined, 'cut short');
  });
});

/** A one-pod simulator (with `faults`) and a KubeConfig for it. */
async function simWithConfig(faults?: string) {
  const sim = await startSim({ pods: 1, faults });
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  return { sim, kc };
}

const LIST = { method: 'GET', path: '/api/v1/namespaces/default/pods' } as const;

/** A plain HTTP server answering with `handler`, and a WireClient (through its pool) for it. */
async function plainServer(handler: http.RequestListener): Promise<{ server: http.Server; wire: WireClient }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { server, wire: new WireClient(kc, { timeoutMs: 5_000, keepAlive: true }) };
}

describe('WireClient', () => {
  test('every request names kwave and its version in User-Agent (kube-apiserver takes its field manager from it), through the pool and on a watch', async () => {
    const seen: string[] = [];
    const { server, wire } = await plainServer((req, res) => {
      seen.push(`${req.url?.includes('watch=true') ? 'watch' : 'get'} ${req.headers['user-agent']}`);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(req.url?.includes('watch=true') ? '' : '{}');
    });
    try {
      await wire.send(LIST);
      await new Promise<void>(
        (resolve, reject) =>
          void wire
            .watch(
              LIST,
              () => undefined,
              (err) => (err ? reject(err) : resolve()),
            )
            .catch(reject),
      );
      const agent = `kwave/${kwaveVersion()} (${process.platform}/${process.arch})`;
      assert.match(agent, /^kwave\/\d+\.\d+\.\d+/);
      assert.deepEqual(seen, [`get ${agent}`, `watch ${agent}`]);
    } finally {
      wire.close();
      server.close();
    }
  });

  test("a pooled connection idle longer than undici's default (4 s) is kept when the server gives no keep-alive hint, as kube-apiserver gives none", async () => {
    let connections = 0;
    const { server, wire } = await plainServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
    // No `Keep-Alive: timeout=` hint and no idle timeout of the server's own, as Go's servers.
    server.keepAliveTimeout = 0;
    server.on('connection', () => connections++);
    try {
      await wire.send(LIST);
      await new Promise((r) => setTimeout(r, 5_000));
      await wire.send(LIST);
      assert.equal(connections, 1);
    } finally {
      wire.close();
      server.closeAllConnections();
      server.close();
    }
  });

  test('a request answered 401 drops the reused credentials: the next one reads them again', async () => {
    const { sim, kc } = await simWithConfig();
    const user = kc.getCurrentUser()!;
    const good = user.token;
    assert.ok(good, 'the simulator kubeconfig carries a bearer token');
    const wire = new WireClient(kc, { timeoutMs: 10_000, keepAlive: true });
    try {
      const get = () => wire.send({ method: 'GET', path: '/api/v1/namespaces/default/pods/demo-0' });
      (user as { token?: string }).token = 'not-the-token';
      await assert.rejects(get(), (err: unknown) => err instanceof KubeError && err.code === 401);
      // Rotated back within the reuse window: without the drop on 401 this would still send the old one.
      (user as { token?: string }).token = good;
      const pod = (await get()) as { metadata?: { name?: string } };
      assert.equal(pod.metadata?.name, 'demo-0');
    } finally {
      wire.close();
      await sim.close();
    }
  });

  test('an answer at a version the caller holds is not parsed: the held object is returned', async () => {
    const { sim, kc } = await simWithConfig();
    const wire = new WireClient(kc, { timeoutMs: 10_000, keepAlive: true });
    try {
      const req = { method: 'GET', path: '/api/v1/namespaces/default/pods/demo-0' } as const;
      const first = (await wire.send(req)) as { metadata: { resourceVersion: string } };
      const held = { held: true };
      const asked: string[] = [];
      assert.equal(
        await wire.send({
          ...req,
          reuse: (rv) => (asked.push(rv), rv === first.metadata.resourceVersion ? held : undefined),
        }),
        held,
      );
      assert.deepEqual(asked, [first.metadata.resourceVersion]);
      assert.deepEqual(await wire.send({ ...req, reuse: () => undefined }), first, 'not held: parsed');
    } finally {
      wire.close();
      await sim.close();
    }
  });

  test("without keep-alive (as with a proxy agent) the request takes Node's https with client-node's agent: answers, refusals and timeouts alike", async () => {
    const { sim, kc } = await simWithConfig('latencyMs=1000');
    const wire = new WireClient(kc, { timeoutMs: 5_000, keepAlive: false });
    const impatient = new WireClient(kc, { timeoutMs: 200, keepAlive: false });
    try {
      const pod = (await wire.send({ method: 'GET', path: '/api/v1/namespaces/default/pods/demo-0' })) as {
        metadata?: { name?: string };
      };
      assert.equal(pod.metadata?.name, 'demo-0');
      await assert.rejects(
        wire.send({ method: 'GET', path: '/api/v1/namespaces/default/pods/nope' }),
        (err: unknown) => err instanceof KubeError && err.code === 404,
      );
      await assert.rejects(
        impatient.send({ method: 'GET', path: '/api/v1/namespaces/default/pods/demo-0' }),
        (err: unknown) => err instanceof KubeError && err.reason === 'Timeout',
      );
    } finally {
      wire.close();
      impatient.close();
      await sim.close();
    }
  });

  test("through the pool: a refusal is a KubeError with its status and retry delay, and a request's exact time limit is kept", async () => {
    const { sim, kc } = await simWithConfig('errorRate=1,errorCodes=429,retryAfterSeconds=7');
    const wire = new WireClient(kc, { timeoutMs: 10_000, keepAlive: true });
    try {
      await assert.rejects(
        wire.send({ method: 'GET', path: '/api/v1/namespaces/default/pods/demo-0' }),
        (err: unknown) => err instanceof KubeError && err.code === 429 && err.retryAfterSeconds === 7,
      );
    } finally {
      wire.close();
      await sim.close();
    }
    const slow = await simWithConfig('latencyMs=3000');
    const lease = new WireClient(slow.kc, { timeoutMs: 10_000, keepAlive: true });
    try {
      const started = Date.now();
      await assert.rejects(
        lease.send({ method: 'GET', path: '/api/v1/namespaces/default/pods/demo-0', timeoutMs: 150 }),
        (err: unknown) => err instanceof KubeError && err.reason === 'Timeout' && /within 150 ms/.test(err.message),
      );
      assert.ok(Date.now() - started < 1000, "the exact limit, not the pool's coarse timers");
    } finally {
      lease.close();
      await slow.sim.close();
    }
  });

  test('through the pool: a slow answer is a Timeout, close() fails what is still open, and nothing is sent once closed', async () => {
    const { sim, kc } = await simWithConfig('latencyMs=3000');
    const get = { method: 'GET', path: '/api/v1/namespaces/default/pods/demo-0' } as const;
    const impatient = new WireClient(kc, { timeoutMs: 200, keepAlive: true });
    const patient = new WireClient(kc, { timeoutMs: 10_000, keepAlive: true });
    try {
      await assert.rejects(
        impatient.send(get),
        (err: unknown) =>
          err instanceof KubeError && err.code === 0 && err.reason === 'Timeout' && /within 200 ms/.test(err.message),
      );
      const open = patient.send(get);
      await new Promise((r) => setTimeout(r, 100));
      patient.close();
      await assert.rejects(open, (err: unknown) => err instanceof KubeError && err.reason === 'Closed');
      await assert.rejects(patient.send(get), (err: unknown) => err instanceof KubeError && err.reason === 'Closed');
    } finally {
      impatient.close();
      patient.close();
      await sim.close();
    }
  });
});
