// Maps a request path to what it addresses: a discovery document or a resource (collection,
// object, subresource), in the URL layout kube-apiserver uses.
import { findResource, groups, type ResourceInfo } from './resources.js';

export type Route =
  | { kind: 'version' }
  | { kind: 'health'; check: string }
  | { kind: 'apiVersions' } // /api
  | { kind: 'apiGroupList' } // /apis
  | { kind: 'apiGroup'; group: string } // /apis/<group>
  | { kind: 'resourceList'; group: string; version: string } // /api/v1, /apis/<group>/<version>
  | { kind: 'openapi'; path: string } // /openapi/v3[/<group version path>]
  | {
      kind: 'resource';
      info: ResourceInfo;
      /** The namespace in the path; undefined for cluster-scoped and all-namespace requests. */
      namespace?: string;
      name?: string;
      subresource?: string;
      /** The deprecated `/watch/` path prefix was used. */
      watchPrefix: boolean;
    }
  | { kind: 'notFound' };

const HEALTH = new Set(['healthz', 'livez', 'readyz']);

export function route(pathname: string): Route {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const [root] = parts;
  if (parts.length === 1 && root === 'version') return { kind: 'version' };
  if (root && HEALTH.has(root)) return { kind: 'health', check: root };
  if (root === 'openapi')
    return parts[1] === 'v3' ? { kind: 'openapi', path: parts.slice(2).join('/') } : { kind: 'notFound' };
  if (root === 'api') {
    if (parts.length === 1) return { kind: 'apiVersions' };
    if (parts[1] !== 'v1') return { kind: 'notFound' };
    if (parts.length === 2) return { kind: 'resourceList', group: '', version: 'v1' };
    return resourceRoute('', 'v1', parts.slice(2));
  }
  if (root === 'apis') {
    if (parts.length === 1) return { kind: 'apiGroupList' };
    const group = parts[1]!;
    if (parts.length === 2) return findGroupVersion(group) ? { kind: 'apiGroup', group } : { kind: 'notFound' };
    const version = parts[2]!;
    if (parts.length === 3)
      return findGroupVersion(group, version) ? { kind: 'resourceList', group, version } : { kind: 'notFound' };
    return resourceRoute(group, version, parts.slice(3));
  }
  return { kind: 'notFound' };
}

function findGroupVersion(group: string, version?: string): boolean {
  const served = groups().find((g) => g.name === group);
  return served !== undefined && (version === undefined || served.versions.includes(version));
}

/** Parses what follows `/api/v1` or `/apis/<g>/<v>`. */
function resourceRoute(group: string, version: string, rest: string[]): Route {
  let watchPrefix = false;
  if (rest[0] === 'watch') {
    watchPrefix = true;
    rest = rest.slice(1);
  }
  // namespaces/<ns>/<resource>[/<name>[/<sub>]] — unless it addresses a namespace object itself.
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))
  ) {
    const [, namespace, plural, name, subresource, ...extra] = rest;
    const info = findResource(group, version, plural!);
    if (!info || !info.namespaced || extra.length) return { kind: 'notFound' };
    if (subresource !== undefined && !info.subresources.includes(subresource)) return { kind: 'notFound' };
    return { kind: 'resource', info, namespace, name, subresource, watchPrefix };
  }
  const [plural, name, subresource, ...extra] = rest;
  const info = findResource(group, version, plural!);
  if (!info || extra.length) return { kind: 'notFound' };
  // A namespaced resource without a namespace: only the all-namespaces collection.
  if (info.namespaced && name !== undefined) return { kind: 'notFound' };
  if (subresource !== undefined && !info.subresources.includes(subresource)) return { kind: 'notFound' };
  return { kind: 'resource', info, name, subresource, watchPrefix };
}
