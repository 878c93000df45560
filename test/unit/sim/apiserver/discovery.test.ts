import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiGroupList, apiResourceList, apiVersions } from '../../../../src/sim/apiserver/discovery.js';
import { openApiDocument, openApiIndex } from '../../../../src/sim/apiserver/openapi.js';

describe('discovery documents', () => {
  test('/api lists v1; /apis lists coordination.k8s.io/v1, policy/v1 and apps/v1', () => {
    assert.deepEqual(apiVersions('127.0.0.1:6443').versions, ['v1']);
    const groups = apiGroupList().groups;
    assert.deepEqual(
      groups.map((g) => g.preferredVersion.groupVersion),
      ['coordination.k8s.io/v1', 'policy/v1', 'apps/v1'],
    );
    assert.deepEqual(
      apiResourceList('policy', 'v1')
        .resources.map((r) => r.name)
        .sort(),
      ['poddisruptionbudgets', 'poddisruptionbudgets/status'],
    );
    const apps = apiResourceList('apps', 'v1')
      .resources.map((r) => r.name)
      .sort();
    assert.deepEqual(apps, [
      'daemonsets',
      'daemonsets/status',
      'deployments',
      'deployments/status',
      'replicasets',
      'replicasets/status',
      'statefulsets',
      'statefulsets/status',
    ]);
  });

  test('/api/v1 has the served core resources with verbs, short names and the status subresources', () => {
    const list = apiResourceList('', 'v1');
    const names = list.resources.map((r) => r.name).sort();
    assert.deepEqual(names, [
      'configmaps',
      'events',
      'namespaces',
      'namespaces/status',
      'nodes',
      'nodes/status',
      'pods',
      'pods/resize',
      'pods/status',
    ]);
    const pods = list.resources.find((r) => r.name === 'pods')!;
    assert.equal(pods.kind, 'Pod');
    assert.equal(pods.namespaced, true);
    assert.ok(pods.verbs.includes('watch') && pods.verbs.includes('patch'));
    assert.deepEqual((pods as { shortNames?: string[] }).shortNames, ['po']);
    assert.deepEqual(list.resources.find((r) => r.name === 'pods/status')!.verbs, ['get', 'patch', 'update']);
    // In-place resize (Kubernetes 1.33), with the verbs kube-apiserver lists for it.
    assert.deepEqual(list.resources.find((r) => r.name === 'pods/resize')!.verbs, ['get', 'patch', 'update']);
  });

  test('the OpenAPI v3 stub tells kubectl that PATCH of each kind takes fieldValidation', () => {
    const index = openApiIndex() as { paths: Record<string, { serverRelativeURL: string }> };
    assert.deepEqual(Object.keys(index.paths), [
      'api/v1',
      'apis/coordination.k8s.io/v1',
      'apis/policy/v1',
      'apis/apps/v1',
    ]);
    const doc = openApiDocument('apis/coordination.k8s.io/v1') as {
      paths: Record<
        string,
        { patch?: { parameters: { name: string; in: string }[]; 'x-kubernetes-group-version-kind': unknown } }
      >;
    };
    const patch = doc.paths['/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}']!.patch!;
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], {
      group: 'coordination.k8s.io',
      version: 'v1',
      kind: 'Lease',
    });
    assert.ok(patch.parameters.some((p) => p.name === 'fieldValidation' && p.in === 'query'));
    assert.equal(openApiDocument('apis/batch/v1'), undefined);
  });
});
