// Several real control planes started at once on one machine: the launcher picks free ports and
// the components bind them later, so a port can be taken in between (by another control plane or
// anything else). A start that finds a port taken is retried on fresh ports; a component is
// trusted to serve on its port only once its own log says so (etcd's /health and the
// controllers' /healthz have no authentication, so another's would answer).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { probe } from '../../src/sim/controlPlane/http.js';
import { freePort } from '../../src/sim/listen.js';
import { skipUnlessControlPlane, startControlPlane, type ControlPlane } from './helpers/controlPlane.js';

const skip = skipUnlessControlPlane();

/** A Node server holding a loopback port, so a component given that port cannot bind it. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

describe('control planes started at once', () => {
  test('four real control planes started together all come up, each on its own ports', { skip }, async () => {
    const started = await Promise.allSettled([0, 1, 2, 3].map(() => startControlPlane()));
    const cps = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      const failures = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
      assert.deepEqual(failures, [], 'every start succeeds');
      assert.equal(new Set(cps.map((c) => c.url)).size, 4, 'four distinct apiservers');
      for (const cp of cps) {
        assert.deepEqual(
          Object.keys(cp.pids()).sort(),
          ['apiserver', 'controller-manager', 'etcd', 'scheduler'],
          `${cp.url}: every component still runs`,
        );
      }
      // Each control plane's admin token works only on its own apiserver: none talks to another's.
      for (const cp of cps) {
        for (const other of cps) {
          if (other === cp) continue;
          const res = await probeWithToken(cp.url, cp.caPem, other.adminToken);
          assert.equal(res, 401, `${cp.url} refuses another control plane's token`);
        }
        assert.equal(await probeWithToken(cp.url, cp.caPem, cp.adminToken), 200, `${cp.url} takes its own token`);
      }
    } finally {
      await Promise.all(cps.map((c) => c.close()));
    }
  });

  test(
    'a start whose ports are taken before the components bind them is retried on fresh ports',
    { skip },
    async () => {
      // Picks 1 (etcd's client port), 8 (the second start's apiserver port) and 15 (the third
      // start's scheduler port) hand out a port held by another listener: three starts fail on a
      // taken port, each at a different component, and a later one succeeds. Usually the fourth; a
      // free port picked by the OS can also be taken by someone else before its bind (the race the
      // retry exists for: CI runs other control planes beside this one), which costs a start more
      // (eight allowed here).
      const held: Server[] = [];
      const taken = new Set<number>();
      let picks = 0;
      const pickPort = async () => {
        picks++;
        if (picks === 1 || picks === 8 || picks === 15) {
          const o = await occupy();
          held.push(o.server);
          taken.add(o.port);
          return o.port;
        }
        return freePort();
      };
      let cp: ControlPlane | undefined;
      try {
        cp = await startControlPlane({ pickPort, portAttempts: 8 });
        const starts = picks / 5;
        assert.ok(
          Number.isInteger(starts) && starts >= 4,
          `${picks} ports picked: whole starts of five ports each, at least four`,
        );
        assert.ok(!taken.has(Number(new URL(cp.url).port)), 'the apiserver is not on a taken port');
        assert.equal(await probeWithToken(cp.url, cp.caPem, cp.adminToken), 200);
        assert.deepEqual(Object.keys(cp.pids()).sort(), ['apiserver', 'controller-manager', 'etcd', 'scheduler']);
      } finally {
        await cp?.close();
        for (const s of held) s.close();
      }
    },
  );
});

/** The HTTP status of GET /api on `url` with `token`, trusting only `caPem`. */
async function probeWithToken(url: string, caPem: string, token: string): Promise<number> {
  return (await probe(`${url}/api`, { caPem, token })).status;
}
