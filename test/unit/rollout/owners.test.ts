// spec.owners, the pure part: what kwave does about each selected pod's owner, and the patches.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { decodeWorkload, type WorkloadView } from '../../../src/cluster/owners.js';
import {
  controllerOf,
  decideOwners,
  OWNER_STATE_ANNOTATION,
  ownerProblems,
  readOwnerState,
  revertPatch,
  templatePatch,
  updatesDue,
  type OwnerLookup,
} from '../../../src/rollout/owners.js';

const PLAN = {
  name: 'db',
  revision: 'r1',
  update: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] },
  readinessGate: { conditionType: 'kwave.dev/in-place-ready', required: true },
};

function workload(kind: WorkloadView['kind'], over: Partial<WorkloadView> = {}): WorkloadView {
  return {
    kind,
    namespace: 'default',
    name: kind.toLowerCase(),
    uid: 'u',
    resourceVersion: '7',
    templateImages: { nginx: 'nginx:1.14.2' },
    annotations: {},
    ...over,
  };
}

function pod(
  name: string,
  image = 'nginx:1.14.2',
  owner?: { kind: string; name: string },
): { namespace: string; name: string; pod: V1Pod } {
  return {
    namespace: 'default',
    name,
    pod: {
      metadata: {
        name,
        namespace: 'default',
        ...(owner
          ? {
              ownerReferences: [
                { apiVersion: 'apps/v1', kind: owner.kind, name: owner.name, uid: 'x', controller: true },
              ],
            }
          : {}),
      },
      spec: { containers: [{ name: 'nginx', image }] },
      status: {
        conditions: [{ type: 'kwave.dev/in-place-ready', status: 'True' }],
        containerStatuses: [
          { name: 'nginx', image, imageID: 'id', ready: true, restartCount: 1, state: { running: {} } },
        ],
      },
    } as V1Pod,
  };
}

const ok = (w: WorkloadView): OwnerLookup => ({ ok: true, workload: w });

describe('decideOwners', () => {
  const rows: { name: string; mode: 'warn' | 'update'; lookup: OwnerLookup; action: string; message: RegExp }[] = [
    {
      name: 'OnDelete StatefulSet, update: updated after its pods',
      mode: 'update',
      lookup: ok(workload('StatefulSet', { strategy: 'OnDelete' })),
      action: 'update',
      message:
        /^StatefulSet default\/statefulset \(OnDelete\), owner of 2 selected pods: its pod template \(nginx nginx:1\.14\.2\) will be set to the target images once its selected pods are upgraded$/,
    },
    {
      name: 'OnDelete DaemonSet, update',
      mode: 'update',
      lookup: ok(workload('DaemonSet', { strategy: 'OnDelete' })),
      action: 'update',
      message: /DaemonSet default\/daemonset \(OnDelete\)/,
    },
    {
      name: 'OnDelete StatefulSet, warn: says update would help',
      mode: 'warn',
      lookup: ok(workload('StatefulSet', { strategy: 'OnDelete' })),
      action: 'warn',
      message: /will run the old image; owners: update would keep its template in step$/,
    },
    {
      name: 'Deployment, update: refused, naming why',
      mode: 'update',
      lookup: ok(workload('Deployment', { strategy: 'RollingUpdate' })),
      action: 'refuse',
      message:
        /^owners: update refused for Deployment default\/deployment \(RollingUpdate\), owner of 2 selected pods: a change to a Deployment's pod template makes its controller roll out a new ReplicaSet and recreate every pod/,
    },
    {
      name: 'Deployment, warn: replacements run the old image',
      mode: 'warn',
      lookup: ok(workload('Deployment', { strategy: 'RollingUpdate' })),
      action: 'warn',
      message: /its pod template still names nginx nginx:1\.14\.2: pods it recreates .* will run the old image$/,
    },
    {
      name: 'RollingUpdate StatefulSet, update: refused',
      mode: 'update',
      lookup: ok(workload('StatefulSet', { strategy: 'RollingUpdate' })),
      action: 'refuse',
      message: /with updateStrategy RollingUpdate its controller deletes and recreates every pod/,
    },
    {
      name: 'RollingUpdate DaemonSet, update: refused',
      mode: 'update',
      lookup: ok(workload('DaemonSet', { strategy: 'RollingUpdate' })),
      action: 'refuse',
      message: /set updateStrategy: OnDelete, or use owners: warn$/,
    },
    {
      name: 'a bare ReplicaSet, update: refused',
      mode: 'update',
      lookup: ok(workload('ReplicaSet')),
      action: 'refuse',
      message: /kwave keeps only OnDelete StatefulSets and DaemonSets in step/,
    },
    {
      name: 'template already at the target: in step, whatever the kind',
      mode: 'update',
      lookup: ok(workload('Deployment', { templateImages: { nginx: 'nginx:1.25.3' } })),
      action: 'in-step',
      message: /already names the target images$/,
    },
    {
      name: 'unreadable owner, warn: unknown',
      mode: 'warn',
      lookup: {
        ok: false,
        kind: 'StatefulSet',
        namespace: 'default',
        name: 'db',
        forbidden: true,
        message: 'forbidden: cannot get statefulsets in namespace default — deploy/rbac.yaml grants it',
      },
      action: 'unknown',
      message:
        /could not be read: forbidden: cannot get statefulsets in namespace default — deploy\/rbac\.yaml grants it; whether its replacements would run the old image is unknown$/,
    },
    {
      name: 'unreadable owner, update: refused',
      mode: 'update',
      lookup: {
        ok: false,
        kind: 'StatefulSet',
        namespace: 'default',
        name: 'db',
        forbidden: true,
        message: 'forbidden',
      },
      action: 'refuse',
      message: /^owners: update: StatefulSet default\/db .*kwave cannot tell whether updating it is safe$/,
    },
  ];
  for (const r of rows) {
    test(r.name, () => {
      const pods = [
        pod('a-0', undefined, { kind: 'X', name: 'x' }),
        pod('a-1', undefined, { kind: 'X', name: 'x' }),
        pod('bare'),
      ];
      const entries = decideOwners({ owners: r.mode, update: PLAN.update }, pods, (p) =>
        controllerOf(p.pod) ? { key: 'k', lookup: r.lookup } : undefined,
      );
      assert.equal(entries.length, 1, 'the bare pod has no owner; the two owned pods one');
      assert.equal(entries[0]!.action, r.action);
      assert.match(entries[0]!.message, r.message);
      assert.deepEqual(entries[0]!.pods, ['default/a-0', 'default/a-1']);
      const problems = ownerProblems(entries);
      assert.equal(problems.length, r.action === 'refuse' || r.action === 'warn' || r.action === 'unknown' ? 1 : 0);
      if (r.action === 'refuse') assert.equal(problems[0]!.severity, 'error');
    });
  }

  test('an OnDelete owner with pods the plan does not select says they would follow too', () => {
    const entries = decideOwners(
      { owners: 'update', update: PLAN.update },
      [pod('db-0', undefined, { kind: 'StatefulSet', name: 'db' })],
      () => ({ key: 'k', lookup: ok(workload('StatefulSet', { strategy: 'OnDelete', replicas: 3 })) }),
    );
    assert.match(
      entries[0]!.message,
      /; 2 of its 3 pods are not selected, and would also come back on the new image if recreated$/,
    );
  });
});

describe('updatesDue', () => {
  test('only update owners whose selected pods are all at the target', () => {
    const w = workload('StatefulSet', { strategy: 'OnDelete' });
    const entries = decideOwners(
      { owners: 'update', update: PLAN.update },
      [pod('db-0', undefined, { kind: 'S', name: 'db' }), pod('db-1', undefined, { kind: 'S', name: 'db' })],
      () => ({ key: 'k', lookup: ok(w) }),
    );
    const now = new Map([
      ['default/db-0', pod('db-0', 'nginx:1.25.3').pod],
      ['default/db-1', pod('db-1').pod],
    ]);
    assert.equal(updatesDue(entries, (k) => now.get(k), PLAN).length, 0, 'db-1 still runs the old image');
    now.set('default/db-1', pod('db-1', 'nginx:1.25.3').pod);
    assert.equal(updatesDue(entries, (k) => now.get(k), PLAN).length, 1);
    now.delete('default/db-1');
    assert.equal(updatesDue(entries, (k) => now.get(k), PLAN).length, 0, 'a vanished pod is not at the target');
  });
});

describe('templatePatch and revertPatch', () => {
  test('sets the target images, guarded by the resourceVersion, and records what was there', () => {
    const body = templatePatch(workload('StatefulSet', { strategy: 'OnDelete' }), PLAN) as {
      metadata: { resourceVersion: string; annotations: Record<string, string> };
      spec: unknown;
    };
    assert.equal(body.metadata.resourceVersion, '7');
    assert.deepEqual(body.spec, { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] } } });
    assert.deepEqual(JSON.parse(body.metadata.annotations[OWNER_STATE_ANNOTATION]!), {
      plan: 'db',
      revision: 'r1',
      containers: { nginx: { fromImage: 'nginx:1.14.2', toImage: 'nginx:1.25.3' } },
    });
  });

  test('a second run of the plan keeps the first original image', () => {
    const state = JSON.stringify({
      plan: 'db',
      revision: 'r0',
      containers: { nginx: { fromImage: 'nginx:1.10', toImage: 'nginx:1.20' } },
    });
    const body = templatePatch(
      workload('StatefulSet', {
        templateImages: { nginx: 'nginx:1.20' },
        annotations: { [OWNER_STATE_ANNOTATION]: state },
      }),
      PLAN,
    ) as { metadata: { annotations: Record<string, string> } };
    assert.equal(
      JSON.parse(body.metadata.annotations[OWNER_STATE_ANNOTATION]!).containers.nginx.fromImage,
      'nginx:1.10',
    );
  });

  test('revert puts back what this plan set, and drops the record', () => {
    const state = JSON.stringify({
      plan: 'db',
      revision: 'r1',
      containers: { nginx: { fromImage: 'nginx:1.14.2', toImage: 'nginx:1.25.3' } },
    });
    const w = workload('StatefulSet', {
      templateImages: { nginx: 'nginx:1.25.3' },
      annotations: { [OWNER_STATE_ANNOTATION]: state },
    });
    assert.equal(readOwnerState(w)?.plan, 'db');
    const r = revertPatch(w, PLAN);
    assert.ok('patch' in r);
    assert.deepEqual(r.patch, {
      metadata: { resourceVersion: '7', annotations: { [OWNER_STATE_ANNOTATION]: null } },
      spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.14.2' }] } } },
    });
    assert.deepEqual(r.restored, ['nginx nginx:1.14.2']);
  });

  test("revert leaves someone else's later change, and another plan's owner, alone", () => {
    const state = JSON.stringify({
      plan: 'db',
      revision: 'r1',
      containers: { nginx: { fromImage: 'nginx:1.14.2', toImage: 'nginx:1.25.3' } },
    });
    const changed = revertPatch(
      workload('StatefulSet', {
        templateImages: { nginx: 'nginx:9' },
        annotations: { [OWNER_STATE_ANNOTATION]: state },
      }),
      PLAN,
    );
    assert.ok('patch' in changed);
    assert.deepEqual(changed.restored, []);
    assert.equal((changed.patch as { spec?: unknown }).spec, undefined);
    assert.ok(
      'skip' in
        revertPatch(
          workload('StatefulSet', { annotations: { [OWNER_STATE_ANNOTATION]: state.replace('"db"', '"other"') } }),
          PLAN,
        ),
    );
    assert.ok('skip' in revertPatch(workload('StatefulSet'), PLAN));
  });
});

describe('decodeWorkload', () => {
  test('reads strategy, template images, controller, replicas; StatefulSets default to RollingUpdate', () => {
    const rs = decodeWorkload('ReplicaSet', {
      metadata: {
        name: 'web-1',
        namespace: 'd',
        uid: 'u',
        resourceVersion: '3',
        ownerReferences: [{ kind: 'Deployment', name: 'web', uid: 'w', controller: true }],
      },
      spec: { replicas: 3, template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1' }] } } },
    });
    assert.deepEqual(rs, {
      kind: 'ReplicaSet',
      namespace: 'd',
      name: 'web-1',
      uid: 'u',
      resourceVersion: '3',
      templateImages: { nginx: 'nginx:1' },
      controller: { kind: 'Deployment', name: 'web', uid: 'w' },
      replicas: 3,
      annotations: {},
    });
    assert.equal(decodeWorkload('Deployment', { spec: { strategy: { type: 'Recreate' } } }).strategy, 'Recreate');
    assert.equal(decodeWorkload('StatefulSet', { spec: {} }).strategy, 'RollingUpdate');
    assert.equal(
      decodeWorkload('DaemonSet', {
        spec: { updateStrategy: { type: 'OnDelete' } },
        status: { desiredNumberScheduled: 4 },
      }).replicas,
      4,
    );
  });
});
