// The chaos suite's watch fault proxy, in front of the embedded API server: answers pass through
// byte for byte, a slow watch holds its chunks back (in order) and nothing else, a cut ends the
// open watch streams and loses what they held.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { makeServingCerts } from '../../src/sim/apiserver/certs.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { HeldChunks, isWatch, startWatchProxy, type WatchProxy } from './watchProxy.js';

const PODS = '/api/v1/namespaces/default/pods';

interface Stream {
  /** Every byte of the body with the time it arrived. */
  chunks: { at: number; bytes: Buffer }[];
  ended: Promise<'end' | 'cut'>;
  abort(): void;
}

function open(base: string, caPem: string, token: string, path: string): Promise<Stream> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca: caPem, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Stream['chunks'] = [];
      res.on('data', (bytes: Buffer) => chunks.push({ at: Date.now(), bytes }));
      const ended = new Promise<'end' | 'cut'>((done) => {
        res.on('end', () => done('end'));
        res.on('aborted', () => done('cut'));
        res.on('error', () => done('cut'));
      });
      resolve({ chunks, ended, abort: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

async function body(base: string, caPem: string, token: string, path: string): Promise<Buffer> {
  const s = await open(base, caPem, token, path);
  await s.ended;
  return Buffer.concat(s.chunks.map((c) => c.bytes));
}

const lines = (s: Stream) =>
  Buffer.concat(s.chunks.map((c) => c.bytes))
    .toString('utf8')
    .split('\n')
    .filter(Boolean);

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the watch fault proxy', () => {
  let sim: Sim;
  let proxy: WatchProxy;
  let proxyCa: string;
  before(async () => {
    sim = await startSim({ pods: 2, seed: 1 });
    const certs = await makeServingCerts();
    proxyCa = certs.caPem;
    proxy = await startWatchProxy({ upstream: sim.url, upstreamCaPem: sim.caPem, ...certs });
  });
  after(async () => {
    await proxy.close();
    await sim.close();
  });

  const touch = (name: string, value: string) =>
    fetchPatch(sim, `${PODS}/${name}`, { metadata: { annotations: { 'chaos.example/note': value } } });

  test('tells watches from other requests by their query', () => {
    assert.equal(isWatch(`${PODS}?watch=true&resourceVersion=5`), true);
    assert.equal(isWatch(`${PODS}?watch=1`), true);
    assert.equal(isWatch(`${PODS}?watch=false`), false);
    assert.equal(isWatch(`${PODS}/demo-0`), false);
  });

  test('answers pass through byte for byte, and a slow watch holds back no other request', async () => {
    const name = sim.store.list('pods', 'default')[0]!.metadata.name;
    proxy.setWatchDelay(60_000);
    try {
      const direct = await body(sim.url, sim.caPem, sim.token, `${PODS}/${name}`);
      const proxied = await body(proxy.url, proxyCa, sim.token, `${PODS}/${name}`);
      assert.ok(direct.length > 0);
      assert.deepEqual(proxied, direct);
      // A refusal too: the API server's own status, not the proxy's.
      const refused = await body(proxy.url, proxyCa, 'not-the-token', `${PODS}/${name}`);
      assert.deepEqual(JSON.parse(refused.toString('utf8')).code, 401);
    } finally {
      proxy.setWatchDelay(0);
    }
  });

  test('a slow watch delivers the same events, each no earlier than the delay, in order', async () => {
    const pods = sim.store.list('pods', 'default');
    const rv = String(sim.store.resourceVersion);
    const path = `${PODS}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=false`;
    const direct = await open(sim.url, sim.caPem, sim.token, path);
    const slow = await open(proxy.url, proxyCa, sim.token, path);
    const delay = 800;
    proxy.setWatchDelay(delay);
    const held = proxy.stats.delayedChunks;
    const sent: number[] = [];
    for (const [i, p] of pods.entries()) {
      sent.push(Date.now());
      await touch(p.metadata.name, `slow-${i}`);
    }
    await until('the direct watch', () => lines(direct).length >= pods.length);
    // Lowered meanwhile: what is held still goes first, after its own delay.
    proxy.setWatchDelay(0);
    await touch(pods[0]!.metadata.name, 'after');
    await until('the slow watch', () => lines(slow).length >= pods.length + 1);
    await until('the direct watch', () => lines(direct).length >= pods.length + 1);
    assert.deepEqual(lines(slow), lines(direct), 'the same events, byte for byte, in the same order');
    assert.ok(proxy.stats.delayedChunks > held, 'chunks were held back');
    const firstSlow = slow.chunks[0]!.at;
    assert.ok(firstSlow - sent[0]! >= delay, `the first event came ${firstSlow - sent[0]!} ms after its change`);
    direct.abort();
    slow.abort();
  });

  test('a cut ends every open watch stream and loses what it held', async () => {
    const rv = String(sim.store.resourceVersion);
    const path = `${PODS}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=false`;
    const stream = await open(proxy.url, proxyCa, sim.token, path);
    proxy.setWatchDelay(60_000);
    try {
      const name = sim.store.list('pods', 'default')[0]!.metadata.name;
      const { cuts, delayedChunks } = proxy.stats;
      await touch(name, 'held');
      await until('the change to be held', () => proxy.stats.delayedChunks > delayedChunks);
      assert.ok(proxy.cutWatches() >= 1);
      assert.equal(await stream.ended, 'cut');
      assert.equal(proxy.stats.cuts, cuts + 1);
      assert.deepEqual(lines(stream), [], 'the held event was lost with the stream');
    } finally {
      proxy.setWatchDelay(0);
    }
  });
});

describe('held chunks', () => {
  test('keep their order when the delay is lowered, each released at its own due time', async () => {
    let now = 0;
    const out: string[] = [];
    const held = new HeldChunks(
      (c) => out.push(c.toString()),
      () => now,
    );
    assert.equal(held.push(Buffer.from('a'), 50), true);
    assert.equal(held.push(Buffer.from('b'), 0), true, 'behind a held chunk, a chunk waits too');
    assert.deepEqual(out, []);
    now = 50;
    await new Promise((r) => setTimeout(r, 80));
    assert.deepEqual(out, ['a', 'b']);
    assert.equal(held.push(Buffer.from('c'), 0), false, 'nothing held: delivered at once');
    assert.deepEqual(out, ['a', 'b', 'c']);
    held.push(Buffer.from('d'), 1000);
    held.drop();
    assert.equal(held.empty, true);
  });
});

async function fetchPatch(sim: Sim, path: string, patch: unknown): Promise<void> {
  const url = new URL(path, sim.url);
  await new Promise<void>((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: 'PATCH',
        ca: sim.caPem,
        headers: { Authorization: `Bearer ${sim.token}`, 'Content-Type': 'application/merge-patch+json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PATCH ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(patch));
  });
}
