// URL paths of kwave's requests, from the collection to the object. Names are escaped so a
// strange namespace or name cannot change the path.

/** `PREFIX/namespaces/NS/RESOURCE`: a namespaced collection. */
function collection(prefix: string, resource: string, namespace: string): string {
  if (!namespace) throw new Error(`${resource} path: namespace must not be empty`);
  return `${prefix}/namespaces/${encodeURIComponent(namespace)}/${resource}`;
}

/** `COLLECTION/NAME`. */
function member(collectionPath: string, name: string): string {
  if (!name) throw new Error(`${collectionPath}: name must not be empty`);
  return `${collectionPath}/${encodeURIComponent(name)}`;
}

/** `/api/v1/namespaces/NS/pods`: the collection a namespaced pod watch streams. */
export const podsPath = (namespace: string): string => collection('/api/v1', 'pods', namespace);

/** `/api/v1/namespaces/NS/pods/NAME`. */
export const podPath = (namespace: string, name: string): string => member(podsPath(namespace), name);

/** `/api/v1/nodes`: the (cluster-scoped) collection a node watch streams. */
export const NODES_PATH = '/api/v1/nodes';

/** `/apis/policy/v1/namespaces/NS/poddisruptionbudgets`. */
export const pdbsPath = (namespace: string): string => collection('/apis/policy/v1', 'poddisruptionbudgets', namespace);

/** `/api/v1/namespaces/NS/configmaps`: the collection the rollout record's watch streams. */
export const configMapsPath = (namespace: string): string => collection('/api/v1', 'configmaps', namespace);

/** `/api/v1/namespaces/NS/configmaps/NAME`. */
export const configMapPath = (namespace: string, name: string): string => member(configMapsPath(namespace), name);

/** `/apis/coordination.k8s.io/v1/namespaces/NS/leases`. */
export const leasesPath = (namespace: string): string =>
  collection('/apis/coordination.k8s.io/v1', 'leases', namespace);

/** `/apis/coordination.k8s.io/v1/namespaces/NS/leases/NAME`. */
export const leasePath = (namespace: string, name: string): string => member(leasesPath(namespace), name);

/** `/api/v1/namespaces/NS/events`. */
export const eventsPath = (namespace: string): string => collection('/api/v1', 'events', namespace);
