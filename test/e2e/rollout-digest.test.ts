// A digest-pinned target through the real `kwave run`: one the runtime runs succeeds; one a
// mirror serves other content for fails DigestMismatch, halts and is rolled back. Read back from
// the pods' imageIDs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultDigest } from '../../src/sim/images.js';
import { endOf, exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';
import { OLD_ID } from './helpers/images.js';

const OTHER = `sha256:${'e'.repeat(64)}`;
const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
nodes:
  - { name: node-1, zone: zone-a }
  - { name: node-2, zone: zone-b }
images:
  "nginx:1.14.2": {}
  "nginx:1.25.3": {}
  "nginx:mirrored": { servesDigest: "${OTHER}" }
workloads:
  - { name: web, replicas: 4, labels: { app: demo }, containers: [{ name: nginx, image: "nginx:1.14.2" }], nodes: [node-1, node-2] }
`;
const NEW_DIGEST = defaultDigest('docker.io/library/nginx:1.25.3');
const MIRRORED_DIGEST = defaultDigest('docker.io/library/nginx:mirrored');

describe('kwave run: digest-pinned targets', () => {
  test('nginx@sha256:… that the runtime runs: every pod proves that digest in its imageID', async () => {
    const fleet = await startFleet({ fixture: FIXTURE });
    try {
      const plan = await fleet.writePlan(
        'pinned.yaml',
        planYaml({ name: 'pinned', image: `nginx@${NEW_DIGEST}`, waves: '[1, "100%"]' }),
      );
      const run = fleet.start(['run', plan]);
      const exit = await exitOf(run);
      assert.equal(exit.code, 0, run.stderr());
      assert.equal(endOf(run).phase, 'Completed');
      const pods = await fleet.pods();
      assert.equal(pods.size, 4);
      for (const [name, p] of pods) {
        assert.equal(p.imageID, `docker.io/library/nginx@${NEW_DIGEST}`, name);
        assert.equal(p.specImage, `nginx@${NEW_DIGEST}`, name);
        assert.equal(p.restartCount, 1, name);
      }
    } finally {
      await fleet.close();
    }
  });

  test('a pinned digest the mirror does not serve: DigestMismatch on the first pod, halt (exit 3), rolled back to the old imageID', async () => {
    const fleet = await startFleet({ fixture: FIXTURE });
    try {
      const plan = await fleet.writePlan(
        'mirror.yaml',
        planYaml({ name: 'mirror', image: `nginx:mirrored@${MIRRORED_DIGEST}`, waves: '[1, "100%"]' }),
      );
      const run = fleet.start(['run', plan]);
      const exit = await exitOf(run);
      assert.equal(exit.code, 3, run.stderr() + run.stdout().slice(-2000));
      assert.equal(endOf(run).phase, 'Halted');
      const failed = run.events.filter((e) => e.event === 'pod-end' && e.result === 'failed');
      assert.equal(failed.length, 1, JSON.stringify(failed));
      assert.match(JSON.stringify(failed[0]), /DigestMismatch/);
      const pods = await fleet.pods();
      for (const [name, p] of pods) {
        assert.equal(p.imageID, OLD_ID, `${name} is on its old image`);
        assert.equal(p.specImage, 'nginx:1.14.2', name);
        assert.equal(p.gate, 'True', `${name} in service`);
      }
      const wasRolledBack = [...pods.values()].filter((p) => p.restartCount === 2);
      assert.equal(
        wasRolledBack.length,
        1,
        'one pod was patched, then rolled back (two restarts); the others untouched',
      );
      assert.equal([...pods.values()].filter((p) => p.restartCount === 0).length, 3);
    } finally {
      await fleet.close();
    }
  });
});
