// What the simulated API server serves, per resource: names, kinds, scope, verbs, subresources,
// the fields a fieldSelector may use, and the write rules that differ between resources.
import type { AppsResource, KubeObject, Resource } from '../store.js';
import { getPath } from './json.js';

export interface ResourceInfo {
  resource: Resource;
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  /** '' for the core group. */
  group: string;
  version: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  /** Subresources served besides the main one (`status`). */
  subresources: string[];
  /** Field selector labels → how to read them from an object. */
  fields: Record<string, (o: KubeObject) => string>;
  /** PUT of an absent object creates it (leases, events). */
  createOnUpdate: boolean;
  /** PUT must carry metadata.resourceVersion (leases: 422 otherwise). */
  requireVersionOnUpdate: boolean;
  /** DELETE answers with the object rather than a Success Status (pods, namespaces). */
  returnsDeletedObject: boolean;
}

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
const at =
  (...path: string[]) =>
  (o: KubeObject) =>
    str(getPath(o, path));

const META_FIELDS = { 'metadata.name': at('metadata', 'name'), 'metadata.namespace': at('metadata', 'namespace') };
const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function info(
  partial: Omit<
    ResourceInfo,
    | 'listKind'
    | 'version'
    | 'categories'
    | 'subresources'
    | 'createOnUpdate'
    | 'requireVersionOnUpdate'
    | 'returnsDeletedObject'
    | 'verbs'
    | 'shortNames'
  > &
    Partial<ResourceInfo>,
): ResourceInfo {
  return {
    version: 'v1',
    listKind: `${partial.kind}List`,
    categories: [],
    subresources: [],
    createOnUpdate: false,
    requireVersionOnUpdate: false,
    returnsDeletedObject: false,
    verbs: ALL_VERBS,
    shortNames: [],
    ...partial,
  };
}

export const RESOURCES: Readonly<Record<Resource, ResourceInfo>> = {
  pods: info({
    resource: 'pods',
    plural: 'pods',
    singular: 'pod',
    kind: 'Pod',
    group: '',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    // resize: in-place resize of CPU and memory, as Kubernetes 1.33 serves it.
    subresources: ['status', 'resize'],
    returnsDeletedObject: true,
    fields: {
      ...META_FIELDS,
      'spec.nodeName': at('spec', 'nodeName'),
      'spec.restartPolicy': at('spec', 'restartPolicy'),
      'spec.schedulerName': at('spec', 'schedulerName'),
      'spec.serviceAccountName': at('spec', 'serviceAccountName'),
      'spec.hostNetwork': (o) => str(getPath(o, ['spec', 'hostNetwork']) ?? false),
      'status.phase': at('status', 'phase'),
      'status.podIP': at('status', 'podIP'),
      'status.nominatedNodeName': at('status', 'nominatedNodeName'),
    },
  }),
  nodes: info({
    resource: 'nodes',
    plural: 'nodes',
    singular: 'node',
    kind: 'Node',
    group: '',
    namespaced: false,
    shortNames: ['no'],
    subresources: ['status'],
    fields: {
      'metadata.name': at('metadata', 'name'),
      'spec.unschedulable': (o) => str(getPath(o, ['spec', 'unschedulable']) ?? false),
    },
  }),
  namespaces: info({
    resource: 'namespaces',
    plural: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    group: '',
    namespaced: false,
    shortNames: ['ns'],
    subresources: ['status'],
    returnsDeletedObject: true,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    fields: { 'metadata.name': at('metadata', 'name'), 'status.phase': at('status', 'phase') },
  }),
  events: info({
    resource: 'events',
    plural: 'events',
    singular: 'event',
    kind: 'Event',
    group: '',
    namespaced: true,
    shortNames: ['ev'],
    createOnUpdate: true,
    fields: {
      ...META_FIELDS,
      'involvedObject.kind': at('involvedObject', 'kind'),
      'involvedObject.namespace': at('involvedObject', 'namespace'),
      'involvedObject.name': at('involvedObject', 'name'),
      'involvedObject.uid': at('involvedObject', 'uid'),
      'involvedObject.apiVersion': at('involvedObject', 'apiVersion'),
      'involvedObject.resourceVersion': at('involvedObject', 'resourceVersion'),
      'involvedObject.fieldPath': at('involvedObject', 'fieldPath'),
      reason: at('reason'),
      reportingComponent: at('reportingComponent'),
      source: at('source', 'component'),
      type: at('type'),
    },
  }),
  configmaps: info({
    resource: 'configmaps',
    plural: 'configmaps',
    singular: 'configmap',
    kind: 'ConfigMap',
    group: '',
    namespaced: true,
    shortNames: ['cm'],
    fields: META_FIELDS,
  }),
  leases: info({
    resource: 'leases',
    plural: 'leases',
    singular: 'lease',
    kind: 'Lease',
    group: 'coordination.k8s.io',
    namespaced: true,
    createOnUpdate: true,
    requireVersionOnUpdate: true,
    fields: META_FIELDS,
  }),
  poddisruptionbudgets: info({
    resource: 'poddisruptionbudgets',
    plural: 'poddisruptionbudgets',
    singular: 'poddisruptionbudget',
    kind: 'PodDisruptionBudget',
    group: 'policy',
    namespaced: true,
    shortNames: ['pdb'],
    subresources: ['status'],
    fields: META_FIELDS,
  }),
  deployments: apps('deployments', 'Deployment', ['deploy']),
  replicasets: apps('replicasets', 'ReplicaSet', ['rs']),
  statefulsets: apps('statefulsets', 'StatefulSet', ['sts']),
  daemonsets: apps('daemonsets', 'DaemonSet', ['ds']),
};

/** An apps/v1 workload: served with its status subresource, as kube-apiserver serves them. */
function apps(resource: AppsResource, kind: string, shortNames: string[]): ResourceInfo {
  return info({
    resource,
    plural: resource,
    singular: kind.toLowerCase(),
    kind,
    group: 'apps',
    namespaced: true,
    shortNames,
    categories: ['all'],
    subresources: ['status'],
    fields: META_FIELDS,
  });
}

export const apiVersionOf = (info: ResourceInfo) => (info.group ? `${info.group}/${info.version}` : info.version);

/** The resources of one group/version ('' = core v1). */
export function resourcesOf(group: string, version: string): ResourceInfo[] {
  return Object.values(RESOURCES).filter((r) => r.group === group && r.version === version);
}

export function findResource(group: string, version: string, plural: string): ResourceInfo | undefined {
  return resourcesOf(group, version).find((r) => r.plural === plural);
}

/** The API groups besides core, with their versions. */
export function groups(): { name: string; versions: string[] }[] {
  const byGroup = new Map<string, Set<string>>();
  for (const r of Object.values(RESOURCES)) {
    if (!r.group) continue;
    const set = byGroup.get(r.group) ?? new Set();
    set.add(r.version);
    byGroup.set(r.group, set);
  }
  return [...byGroup].map(([name, versions]) => ({ name, versions: [...versions] }));
}
