// Who asks for a pause, resume or abort: the cluster's name for the caller where it tells (a
// SelfSubjectReview), and always where the command ran.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { whoIsAsking } from '../../../src/session/requests.js';
import { KubeError } from '../../../src/cluster/kubeError.js';

const env = { USER: 'alice' };

test('the cluster user, then the local user and host', async () => {
  assert.deepEqual(await whoIsAsking({ whoAmI: async () => 'kwave-admin' }, env), {
    by: `kwave-admin (alice@${hostname()})`,
    user: 'kwave-admin',
  });
});

test('a cluster that does not tell (or refuses to) leaves the local user and host', async () => {
  assert.deepEqual(await whoIsAsking({ whoAmI: async () => undefined }, env), { by: `alice@${hostname()}` });
  assert.deepEqual(
    await whoIsAsking(
      {
        whoAmI: async () => {
          throw new KubeError(403, 'Forbidden', 'selfsubjectreviews is forbidden');
        },
      },
      env,
    ),
    { by: `alice@${hostname()}` },
  );
});
