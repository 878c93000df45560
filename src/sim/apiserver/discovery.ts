// The discovery documents kubectl reads before it touches a resource: /version, /api, /apis,
// /apis/<group>, and the resource lists of each group version. Served in the legacy (unaggregated)
// form, which clients fall back to when the aggregated form is not offered.
import { apiVersionOf, groups, resourcesOf } from './resources.js';

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-kwave-sim',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-01-01T00:00:00Z',
  goVersion: 'go1.23.4',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export function apiVersions(serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupDoc(name: string, versions: string[]) {
  const list = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: list, preferredVersion: list[0]! };
}

export function apiGroupList() {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups().map((g) => groupDoc(g.name, g.versions)) };
}

export function apiGroup(name: string) {
  const g = groups().find((x) => x.name === name)!;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(g.name, g.versions) };
}

export function apiResourceList(group: string, version: string) {
  const resources = resourcesOf(group, version).flatMap((r) => {
    const main = {
      name: r.plural,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
      ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
      ...(r.categories.length ? { categories: r.categories } : {}),
      storageVersionHash: Buffer.from(`${apiVersionOf(r)}/${r.kind}`)
        .toString('base64')
        .slice(0, 11),
    };
    const subs = r.subresources.map((s) => ({
      name: `${r.plural}/${s}`,
      singularName: '',
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: ['get', 'patch', 'update'],
    }));
    return [main, ...subs];
  });
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}
