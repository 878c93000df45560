// A webhook gate through the real `kwave run`, against a local HTTP server: one that refuses
// (403) halts the rollout after wave 1 and rolls it back; one that never answers times out and
// does the same. The gate's requests are counted on the server, the outcome read from the pods.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { endOf, exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';
import { OLD_ID } from './helpers/images.js';

/** A webhook that answers `status` (or never, for 0), counting the POSTs it gets and their bodies. */
async function webhook(status: number): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = [];
  const hanging = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += String(d)));
    req.on('end', () => {
      bodies.push(JSON.parse(text || 'null'));
      if (status === 0) {
        hanging.add(() => res.destroy());
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain' }).end('no change ticket');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/check?token=secret`,
    bodies,
    close: async () => {
      for (const h of hanging) h();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('kwave run: webhook gate', () => {
  for (const [what, status, message] of [
    ['refuses (403)', 403, /change-ticket: webhook .*403/],
    [
      'never answers within its timeout',
      0,
      /change-ticket: webhook http:\/\/127\.0\.0\.1:\d+\/…: no answer within 1000 ms \(after 2 attempts\)/,
    ],
  ] as const) {
    test(`a webhook that ${what}: the rollout halts after wave 1 (exit 3) and wave 1 is rolled back`, async () => {
      const hook = await webhook(status);
      const fleet = await startFleet({ pods: 4 });
      try {
        const plan = await fleet.writePlan(
          'hooked.yaml',
          planYaml({
            name: 'hooked',
            waves: '[1, "100%"]',
            rollback: 'all',
            gates: [{ name: 'change-ticket', webhook: { url: hook.url, timeout: '1s', retries: 1 } }],
          }),
        );
        const run = fleet.start(['run', plan]);
        const exit = await exitOf(run);
        assert.equal(exit.code, 3, run.stderr() + run.stdout().slice(-2000));
        const end = endOf(run);
        assert.match(end.message ?? JSON.stringify(end), message);
        assert.equal(run.stdout().includes('secret'), false, 'the query string (a secret) is never printed');
        assert.equal(run.stdout().includes('/check'), false, 'nor the path');
        // The gate asked twice (1 retry), about wave 1.
        assert.equal(hook.bodies.length, 2, JSON.stringify(hook.bodies));
        assert.deepEqual((hook.bodies[0] as { plan: string; wave: number }).wave, 1);
        for (const [name, p] of await fleet.pods()) {
          assert.equal(p.imageID, OLD_ID, `${name} is on its old image`);
          assert.equal(p.gate, 'True', `${name} in service`);
        }
        const rolledBack = [...(await fleet.pods()).values()].filter((p) => p.restartCount === 2);
        assert.equal(rolledBack.length, 1, 'wave 1 (one pod) was upgraded, then rolled back');
      } finally {
        await fleet.close();
        await hook.close();
      }
    });
  }
});
