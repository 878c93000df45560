// What a write must be before any rule of its kind applies: a JSON object of the right kind and
// API version, in the URL's namespace and with the URL's name, into a namespace that is open.
import type { Store } from '../store.js';
import { clone, isObject, type JsonObject } from './json.js';
import { RESOURCES, apiVersionOf, type ResourceInfo } from './resources.js';
import { ApiError, badRequest, failure, notFound } from './status.js';

/** A create/update body: a JSON object of the right kind, its namespace that of the URL. */
export function checkedBody(info: ResourceInfo, namespace: string | undefined, body: unknown): JsonObject {
  if (!isObject(body)) throw badRequest('the body of the request is not a JSON object');
  const obj = clone(body);
  if (obj.kind !== undefined && obj.kind !== info.kind) {
    throw badRequest(`the kind in the body (${String(obj.kind)}) does not match the expected kind (${info.kind})`);
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersionOf(info)) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersionOf(info)})`,
    );
  }
  obj.kind = info.kind;
  obj.apiVersion = apiVersionOf(info);
  const meta = isObject(obj.metadata) ? obj.metadata : (obj.metadata = {});
  if (info.namespaced) {
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace!;
  } else delete meta.namespace;
  return obj;
}

export function checkName(obj: JsonObject, name: string): void {
  const given = (obj.metadata as JsonObject | undefined)?.name;
  if (given !== name)
    throw badRequest(`the name of the object (${String(given ?? '')}) does not match the name on the URL (${name})`);
}

/** The NamespaceLifecycle admission check: no new objects in a missing or terminating namespace. */
export function checkNamespaceOpen(store: Store, info: ResourceInfo, namespace: string, name: string): void {
  const ns = store.get('namespaces', undefined, namespace);
  if (!ns) throw notFound(RESOURCES.namespaces, namespace);
  if (ns.metadata.deletionTimestamp) {
    throw new ApiError(
      failure(
        403,
        'Forbidden',
        `${info.group ? `${info.plural}.${info.group}` : info.plural} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        {
          name,
          ...(info.group ? { group: info.group } : {}),
          kind: info.plural,
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${namespace} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
      ),
    );
  }
}
