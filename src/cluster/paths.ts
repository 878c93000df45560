// URL paths of the Watch and of the plain-HTTPS pod requests (client-node's typed calls build their own). Names are escaped so a
// strange namespace cannot change the path.

/** `/api/v1/namespaces/NS/pods`: the collection a namespaced pod watch streams. */
export function podsPath(namespace: string): string {
  if (!namespace) throw new Error('podsPath: namespace must not be empty');
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
}

/** `/api/v1/namespaces/NS/pods/NAME`. */
export function podPath(namespace: string, name: string): string {
  if (!name) throw new Error('podPath: name must not be empty');
  return `${podsPath(namespace)}/${encodeURIComponent(name)}`;
}

/** `/api/v1/nodes`: the (cluster-scoped) collection a node watch streams. */
export const NODES_PATH = '/api/v1/nodes';

/** `/apis/policy/v1/namespaces/NS/poddisruptionbudgets`. */
export function pdbsPath(namespace: string): string {
  if (!namespace) throw new Error('pdbsPath: namespace must not be empty');
  return `/apis/policy/v1/namespaces/${encodeURIComponent(namespace)}/poddisruptionbudgets`;
}
