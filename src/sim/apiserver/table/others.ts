// Table columns for the resources besides pods: nodes, namespaces, configmaps, leases, events, PDBs.
import type { KubeObject } from '../../store.js';
import { getPath, isObject } from '../json.js';
import { ageOf } from './duration.js';
import type { ColumnDefinition } from './types.js';

const col = (
  name: string,
  description: string,
  priority = 0,
  type: ColumnDefinition['type'] = 'string',
): ColumnDefinition => ({
  name,
  type,
  format: name === 'Name' ? 'name' : '',
  description,
  priority,
});
const NAME = col('Name', 'Name of the object.');
const AGE = col('Age', 'Time since the object was created.');
const text = (v: unknown, none = '<none>'): string => (typeof v === 'string' && v !== '' ? v : none);

function nodeStatus(node: KubeObject): string {
  const conditions = getPath(node, ['status', 'conditions']);
  const ready = Array.isArray(conditions) ? conditions.find((c) => isObject(c) && c.type === 'Ready') : undefined;
  let s = !isObject(ready)
    ? 'Unknown'
    : ready.status === 'True'
      ? 'Ready'
      : ready.status === 'False'
        ? 'NotReady'
        : 'Unknown';
  if (getPath(node, ['spec', 'unschedulable']) === true) s += ',SchedulingDisabled';
  return s;
}

function nodeRoles(node: KubeObject): string {
  const roles = Object.keys(node.metadata.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter(Boolean);
  return roles.length ? roles.sort().join(',') : '<none>';
}

function nodeAddress(node: KubeObject, type: string): string {
  const addresses = getPath(node, ['status', 'addresses']);
  const hit = Array.isArray(addresses) ? addresses.find((a) => isObject(a) && a.type === type) : undefined;
  return isObject(hit) ? text(hit.address) : '<none>';
}

export interface Printer {
  columns: ColumnDefinition[];
  cells(obj: KubeObject, now: Date): (string | number)[];
}

export const OTHER_PRINTERS: Readonly<Record<string, Printer>> = {
  nodes: {
    columns: [
      NAME,
      col('Status', 'The Ready condition of the node.'),
      col('Roles', 'The node-role labels.'),
      AGE,
      col('Version', 'The kubelet version.'),
      col('Internal-IP', 'The internal address.', 1),
      col('External-IP', 'The external address.', 1),
      col('OS-Image', 'The OS image.', 1),
      col('Kernel-Version', 'The kernel version.', 1),
      col('Container-Runtime', 'The container runtime version.', 1),
    ],
    cells: (n, now) => [
      n.metadata.name,
      nodeStatus(n),
      nodeRoles(n),
      ageOf(n.metadata.creationTimestamp, now),
      text(getPath(n, ['status', 'nodeInfo', 'kubeletVersion']), ''),
      nodeAddress(n, 'InternalIP'),
      nodeAddress(n, 'ExternalIP'),
      text(getPath(n, ['status', 'nodeInfo', 'osImage']), '<unknown>'),
      text(getPath(n, ['status', 'nodeInfo', 'kernelVersion']), '<unknown>'),
      text(getPath(n, ['status', 'nodeInfo', 'containerRuntimeVersion']), '<unknown>'),
    ],
  },
  namespaces: {
    columns: [NAME, col('Status', 'The namespace phase.'), AGE],
    cells: (ns, now) => [
      ns.metadata.name,
      text(getPath(ns, ['status', 'phase']), ''),
      ageOf(ns.metadata.creationTimestamp, now),
    ],
  },
  configmaps: {
    columns: [NAME, col('Data', 'Number of data and binaryData keys.', 0, 'integer'), AGE],
    cells: (cm, now) => {
      const count = (v: unknown) => (isObject(v) ? Object.keys(v).length : 0);
      return [cm.metadata.name, count(cm.data) + count(cm.binaryData), ageOf(cm.metadata.creationTimestamp, now)];
    },
  },
  poddisruptionbudgets: {
    columns: [
      NAME,
      col('Min Available', 'The minimum number of pods that must be available.'),
      col('Max Unavailable', 'The maximum number of pods that may be unavailable.'),
      col('Allowed Disruptions', 'Calculated number of pods that may be disrupted at this time.', 0, 'integer'),
      AGE,
    ],
    cells: (p, now) => {
      const amount = (v: unknown) => (typeof v === 'number' || (typeof v === 'string' && v !== '') ? String(v) : 'N/A');
      const allowed = getPath(p, ['status', 'disruptionsAllowed']);
      return [
        p.metadata.name,
        amount(getPath(p, ['spec', 'minAvailable'])),
        amount(getPath(p, ['spec', 'maxUnavailable'])),
        typeof allowed === 'number' ? allowed : 0,
        ageOf(p.metadata.creationTimestamp, now),
      ];
    },
  },
  leases: {
    columns: [NAME, col('Holder', 'The holder of the lease.'), AGE],
    cells: (l, now) => [
      l.metadata.name,
      text(getPath(l, ['spec', 'holderIdentity']), ''),
      ageOf(l.metadata.creationTimestamp, now),
    ],
  },
  events: {
    columns: [
      col('Last Seen', 'Time since the event was last seen.'),
      col('Type', 'Normal or Warning.'),
      col('Reason', 'Why the event happened.'),
      col('Object', 'The object the event is about.'),
      col('Message', 'What happened.'),
    ],
    cells: (e, now) => {
      const last = getPath(e, ['lastTimestamp']) ?? getPath(e, ['eventTime']) ?? e.metadata.creationTimestamp;
      const kind = String(getPath(e, ['involvedObject', 'kind']) ?? '').toLowerCase();
      return [
        ageOf(last, now),
        text(getPath(e, ['type']), ''),
        text(getPath(e, ['reason']), ''),
        `${kind}/${String(getPath(e, ['involvedObject', 'name']) ?? '')}`,
        text(getPath(e, ['message']), ''),
      ];
    },
  },
};

const int = (v: unknown): number => (typeof v === 'number' ? v : 0);
const ofSpec = (o: KubeObject, ...path: string[]) => int(getPath(o, ['spec', ...path]));
const ofStatus = (o: KubeObject, ...path: string[]) => int(getPath(o, ['status', ...path]));

/** The apps/v1 workloads, with the columns kubectl prints for them. */
export const APPS_PRINTERS: Readonly<Record<string, Printer>> = {
  deployments: {
    columns: [
      NAME,
      col('Ready', 'Ready replicas of the desired.'),
      col('Up-to-date', 'Replicas of the newest template.', 0, 'integer'),
      col('Available', 'Available replicas.', 0, 'integer'),
      AGE,
    ],
    cells: (d, now) => [
      d.metadata.name,
      `${ofStatus(d, 'readyReplicas')}/${ofSpec(d, 'replicas')}`,
      ofStatus(d, 'updatedReplicas'),
      ofStatus(d, 'availableReplicas'),
      ageOf(d.metadata.creationTimestamp, now),
    ],
  },
  replicasets: {
    columns: [
      NAME,
      col('Desired', 'Desired replicas.', 0, 'integer'),
      col('Current', 'Replicas that exist.', 0, 'integer'),
      col('Ready', 'Ready replicas.', 0, 'integer'),
      AGE,
    ],
    cells: (r, now) => [
      r.metadata.name,
      ofSpec(r, 'replicas'),
      ofStatus(r, 'replicas'),
      ofStatus(r, 'readyReplicas'),
      ageOf(r.metadata.creationTimestamp, now),
    ],
  },
  statefulsets: {
    columns: [NAME, col('Ready', 'Ready replicas of the desired.'), AGE],
    cells: (s, now) => [
      s.metadata.name,
      `${ofStatus(s, 'readyReplicas')}/${ofSpec(s, 'replicas')}`,
      ageOf(s.metadata.creationTimestamp, now),
    ],
  },
  daemonsets: {
    columns: [
      NAME,
      col('Desired', 'Nodes that should run the pod.', 0, 'integer'),
      col('Current', 'Nodes running it.', 0, 'integer'),
      col('Ready', 'Nodes where it is ready.', 0, 'integer'),
      col('Up-to-date', 'Nodes running the newest template.', 0, 'integer'),
      col('Available', 'Nodes where it is available.', 0, 'integer'),
      AGE,
    ],
    cells: (d, now) => [
      d.metadata.name,
      ofStatus(d, 'desiredNumberScheduled'),
      ofStatus(d, 'currentNumberScheduled'),
      ofStatus(d, 'numberReady'),
      ofStatus(d, 'updatedNumberScheduled'),
      ofStatus(d, 'numberAvailable'),
      ageOf(d.metadata.creationTimestamp, now),
    ],
  },
};
