import { test } from 'node:test';
import assert from 'node:assert/strict';
import { identities, renderTokenFile } from '../../../../src/sim/controlPlane/identities.js';

test('built-in identities plus extra users, each with its own fresh token', () => {
  const ids = identities([{ name: 'viewer' }, { name: 'ops', groups: ['team-a', 'team-b'] }]);
  assert.deepEqual(
    ids.map((i) => `${i.user} [${i.groups.join(',')}]`),
    [
      'kwave-admin [system:masters]',
      'kwave-node-agent [system:masters]',
      'system:kube-controller-manager []',
      'system:kube-scheduler []',
      'viewer []',
      'ops [team-a,team-b]',
    ],
  );
  assert.equal(new Set(ids.map((i) => i.token)).size, ids.length);
  assert.notEqual(identities()[0]?.token, ids[0]?.token, 'a new start, new tokens');
});

test('the token file is the CSV kube-apiserver reads: token,user,uid and quoted groups', () => {
  const [admin, , cm] = renderTokenFile(identities()).trim().split('\n');
  assert.match(admin ?? '', /^[0-9a-f]{48},kwave-admin,kwave-admin,"system:masters"$/);
  assert.match(cm ?? '', /^[0-9a-f]{48},system:kube-controller-manager,system:kube-controller-manager$/);
});

test('a bad or repeated user name is refused', () => {
  assert.throws(() => identities([{ name: 'a,b' }]), /user name "a,b"/);
  assert.throws(() => identities([{ name: 'kwave-admin' }]), /given twice/);
});
