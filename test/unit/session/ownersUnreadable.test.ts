// discoverOwners with kinds the permission preflight found unreadable: no request for them (the
// API server would refuse it), each such owner reported as not read; other kinds read as usual.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { discoverOwners } from '../../../src/session/owners.js';
import type { WorkloadKind, WorkloadView } from '../../../src/cluster/index.js';
import { makePod } from '../inplace/fixtures.js';

const owned = (name: string, kind: string, owner: string) => {
  const pod = makePod({ name, namespace: 'web', uid: `u-${name}`, rv: '1' });
  pod.metadata!.ownerReferences = [{ apiVersion: 'apps/v1', kind, name: owner, uid: `o-${owner}`, controller: true }];
  return { namespace: 'web', name, pod };
};

test('owners of an unreadable kind are not asked for; the others are read', async () => {
  const asked: string[] = [];
  const read = async (kind: WorkloadKind, namespace: string, name: string): Promise<WorkloadView> => {
    asked.push(`${kind} ${name}`);
    return {
      kind,
      namespace,
      name,
      uid: `o-${name}`,
      resourceVersion: '1',
      strategy: 'OnDelete',
      templateImages: { nginx: 'nginx:1.14.2' },
      annotations: {},
      replicas: 1,
    } as WorkloadView;
  };
  const plan = {
    owners: 'warn' as const,
    update: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] },
  } as Parameters<typeof discoverOwners>[1];
  const entries = await discoverOwners(
    read,
    plan,
    [owned('db-0', 'StatefulSet', 'db'), owned('agent-x', 'DaemonSet', 'agent')],
    new Set(['statefulsets']),
  );
  assert.deepEqual(asked, ['DaemonSet agent'], 'no request for the StatefulSet');
  const db = entries.find((e) => e.name === 'db')!;
  assert.equal(db.action, 'unknown');
  assert.match(
    db.message,
    /^StatefulSet web\/db \(owner of 1 selected pod\) could not be read: not read: cannot get statefulsets in namespace web — deploy\/rbac\.yaml grants it; whether its replacements would run the old image is unknown$/,
  );
  assert.equal(entries.find((e) => e.name === 'agent')!.action, 'warn');
});
