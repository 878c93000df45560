// A minimal OpenAPI v3 description: just enough for kubectl (create, apply, replace) to learn
// that the server validates fields itself (the `fieldValidation` query parameter on each kind's
// PATCH) so it skips client-side schema validation, which would need the full schemas. No type
// schemas are published; /openapi/v2 stays absent.
import { createHash } from 'node:crypto';
import { groups, resourcesOf, type ResourceInfo } from './resources.js';

const FIELD_VALIDATION = {
  name: 'fieldValidation',
  in: 'query',
  description: 'Strict, Warn or Ignore (accepted; unknown fields are not detected by the simulator).',
  schema: { type: 'string', uniqueItems: true },
};

function groupVersions(): { group: string; version: string; path: string }[] {
  return [
    { group: '', version: 'v1', path: 'api/v1' },
    ...groups().flatMap((g) =>
      g.versions.map((version) => ({ group: g.name, version, path: `apis/${g.name}/${version}` })),
    ),
  ];
}

function operations(info: ResourceInfo) {
  const gvk = { 'x-kubernetes-group-version-kind': { group: info.group, version: info.version, kind: info.kind } };
  const ok = { responses: { '200': { description: 'OK' } } };
  const prefix = `/${info.group ? `apis/${info.group}` : 'api'}/${info.version}`;
  const scope = info.namespaced ? '/namespaces/{namespace}' : '';
  return {
    [`${prefix}${scope}/${info.plural}`]: {
      get: { operationId: `list${info.kind}`, ...gvk, 'x-kubernetes-action': 'list', ...ok },
      post: {
        operationId: `create${info.kind}`,
        ...gvk,
        'x-kubernetes-action': 'post',
        parameters: [FIELD_VALIDATION],
        ...ok,
      },
    },
    [`${prefix}${scope}/${info.plural}/{name}`]: {
      get: { operationId: `read${info.kind}`, ...gvk, 'x-kubernetes-action': 'get', ...ok },
      put: {
        operationId: `replace${info.kind}`,
        ...gvk,
        'x-kubernetes-action': 'put',
        parameters: [FIELD_VALIDATION],
        ...ok,
      },
      patch: {
        operationId: `patch${info.kind}`,
        ...gvk,
        'x-kubernetes-action': 'patch',
        parameters: [FIELD_VALIDATION],
        ...ok,
      },
      delete: { operationId: `delete${info.kind}`, ...gvk, 'x-kubernetes-action': 'delete', ...ok },
    },
  };
}

/** The document of one group version, or undefined if it is not served. */
export function openApiDocument(path: string): object | undefined {
  const gv = groupVersions().find((g) => g.path === path);
  if (!gv) return undefined;
  const paths = Object.assign({}, ...resourcesOf(gv.group, gv.version).map(operations)) as Record<string, unknown>;
  return { openapi: '3.0.0', info: { title: 'Kubernetes (kwave sim)', version: 'v1.32.0' }, paths, components: {} };
}

/** /openapi/v3: where each group version's document is. */
export function openApiIndex(): object {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const gv of groupVersions()) {
    const hash = createHash('sha512')
      .update(JSON.stringify(openApiDocument(gv.path)))
      .digest('hex')
      .toUpperCase()
      .slice(0, 128);
    paths[gv.path] = { serverRelativeURL: `/openapi/v3/${gv.path}?hash=${hash}` };
  }
  return { paths };
}
