// The main thread's side of `kwave sim`'s worker (src/cli/simThread.ts), against small worker
// scripts that speak simWorker.ts's messages: where it serves, a KwaveError rebuilt with its code,
// exit code and position, a thread that fails while it serves, and closing.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KwaveError } from '../../../src/errors.js';
import { serveInWorker } from '../../../src/cli/simThread.js';

const dir = mkdtempSync(path.join(tmpdir(), 'kwave-sim-thread-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A worker script (ESM) with `body` after `parentPort` and `workerData` are in scope. */
function workerScript(name: string, body: string): string {
  const file = path.join(dir, `${name}.mjs`);
  writeFileSync(file, `import { parentPort, workerData } from 'node:worker_threads';\n${body}\n`);
  return file;
}

const request = { kind: 'one', options: { pods: 1 } } as const;
const served = {
  url: 'https://127.0.0.1:1',
  metricsUrl: 'http://127.0.0.1:2',
  world: { pods: 1, nodes: 1, namespaces: 1, startingPods: 0 },
};

describe('the simulator thread (simThread.ts)', { timeout: 20_000 }, () => {
  test('resolves with where it serves, and close waits for the thread to close the clusters', async () => {
    const file = workerScript(
      'serves',
      `parentPort.postMessage({ type: 'started', clusters: [{ ...${JSON.stringify(served)}, pods: workerData.options.pods }] });
       parentPort.once('message', (m) => { if (m.type === 'close') setTimeout(() => parentPort.postMessage({ type: 'closed' }), 50); });`,
    );
    const sim = await serveInWorker(request, file);
    assert.deepEqual(sim.clusters, [{ ...served, pods: 1 }], 'the request reached the thread, its answer came back');
    const t0 = Date.now();
    await sim.close();
    assert.ok(Date.now() - t0 >= 40, 'close resolved only after the thread said closed');
  });

  test('a KwaveError in the thread comes back a KwaveError with its code, exit code and position', async () => {
    const pos = { file: 'f.yaml', line: 3, col: 5, path: 'pods[0].image' };
    const file = workerScript(
      'fails',
      `parentPort.postMessage({ type: 'failed', message: 'f.yaml:3:5: bad image', kwave: { code: 'FIXTURE', exitCode: 2, pos: ${JSON.stringify(pos)} } });`,
    );
    await assert.rejects(serveInWorker(request, file), (err: unknown) => {
      assert.ok(err instanceof KwaveError);
      assert.equal(err.code, 'FIXTURE');
      assert.equal(err.exitCode, 2);
      assert.deepEqual(err.pos, pos);
      assert.equal(err.message, 'f.yaml:3:5: bad image');
      return true;
    });
  });

  test('a thread that dies before it serves rejects the start', async () => {
    const file = workerScript('dies', `throw new Error('no world today');`);
    await assert.rejects(serveInWorker(request, file), /no world today/);
  });

  test('a thread that fails while it serves rejects `crashed`', async () => {
    const file = workerScript(
      'crashes',
      `parentPort.postMessage({ type: 'started', clusters: [${JSON.stringify(served)}] });\nsetTimeout(() => { throw new Error('store corrupted'); }, 20);`,
    );
    const sim = await serveInWorker(request, file);
    await assert.rejects(sim.crashed, /store corrupted/);
  });
});
