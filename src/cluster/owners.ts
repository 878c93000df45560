// The apps/v1 workloads that own pods, read and patched for `spec.owners` (rollout/owners.ts
// decides; this file only talks HTTP through Cluster). Touches: GET and PATCH of replicasets,
// deployments, statefulsets and daemonsets in the pods' namespaces.
import type { Cluster } from './cluster.js';
import type { WorkloadResource } from './requestCounter.js';

export type WorkloadKind = 'ReplicaSet' | 'Deployment' | 'StatefulSet' | 'DaemonSet';

export const WORKLOAD_RESOURCES: Readonly<Record<WorkloadKind, WorkloadResource>> = {
  ReplicaSet: 'replicasets',
  Deployment: 'deployments',
  StatefulSet: 'statefulsets',
  DaemonSet: 'daemonsets',
};

export const isWorkloadKind = (kind: string): kind is WorkloadKind => Object.hasOwn(WORKLOAD_RESOURCES, kind);

/** What kwave needs of a workload: identity, how its controller replaces pods, and its template's images. */
export interface WorkloadView {
  kind: WorkloadKind;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** `spec.updateStrategy.type` (StatefulSet, DaemonSet) or `spec.strategy.type` (Deployment); absent for a ReplicaSet. */
  strategy?: string;
  /** Container name → image, of `spec.template.spec.containers`. */
  templateImages: Record<string, string>;
  /** The workload's own controller (a ReplicaSet's Deployment). */
  controller?: { kind: string; name: string; uid?: string };
  /** Pods the controller keeps: `spec.replicas`, or a DaemonSet's `status.desiredNumberScheduled`. */
  replicas?: number;
  annotations: Record<string, string>;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Wire JSON of a workload → the view; tolerant of missing fields (a server may leave them out). */
export function decodeWorkload(kind: WorkloadKind, raw: unknown): WorkloadView {
  const o = obj(raw);
  const meta = obj(o.metadata);
  const spec = obj(o.spec);
  const status = obj(o.status);
  const containers = obj(obj(spec.template).spec).containers;
  const templateImages: Record<string, string> = {};
  for (const c of Array.isArray(containers) ? containers : []) {
    const name = str(obj(c).name);
    const image = str(obj(c).image);
    if (name && image) templateImages[name] = image;
  }
  const strategy = str(obj(kind === 'Deployment' ? spec.strategy : spec.updateStrategy).type);
  const refs = Array.isArray(meta.ownerReferences) ? meta.ownerReferences.map(obj) : [];
  const ctrl = refs.find((r) => r.controller === true);
  const replicas = kind === 'DaemonSet' ? status.desiredNumberScheduled : spec.replicas;
  const annotations = Object.fromEntries(
    Object.entries(obj(meta.annotations)).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  return {
    kind,
    namespace: str(meta.namespace) ?? '',
    name: str(meta.name) ?? '',
    uid: str(meta.uid) ?? '',
    resourceVersion: str(meta.resourceVersion) ?? '',
    ...(strategy ? { strategy } : kind === 'StatefulSet' || kind === 'DaemonSet' ? { strategy: 'RollingUpdate' } : {}),
    templateImages,
    ...(ctrl && str(ctrl.kind) && str(ctrl.name)
      ? {
          controller: {
            kind: str(ctrl.kind)!,
            name: str(ctrl.name)!,
            ...(str(ctrl.uid) ? { uid: str(ctrl.uid)! } : {}),
          },
        }
      : {}),
    ...(typeof replicas === 'number' ? { replicas } : {}),
    annotations,
  };
}

/** GET a workload. Fails with KubeError (403 when these credentials may not read it, 404 when it is gone). */
export async function readWorkload(
  cluster: Cluster,
  kind: WorkloadKind,
  namespace: string,
  name: string,
): Promise<WorkloadView> {
  return decodeWorkload(kind, await cluster.workloadRequest('get', WORKLOAD_RESOURCES[kind], namespace, name));
}

/** Strategic-merge PATCH of a workload with a body built by rollout/owners.ts (guarded by the resourceVersion in it). */
export async function patchWorkload(
  cluster: Cluster,
  kind: WorkloadKind,
  namespace: string,
  name: string,
  body: object,
): Promise<WorkloadView> {
  return decodeWorkload(kind, await cluster.workloadRequest('patch', WORKLOAD_RESOURCES[kind], namespace, name, body));
}

/** Whether these credentials may patch the workload: an empty patch with dryRun=All (nothing is written). Fails with KubeError 403 if not. */
export async function checkWorkloadPatch(
  cluster: Cluster,
  kind: WorkloadKind,
  namespace: string,
  name: string,
): Promise<void> {
  await cluster.workloadRequest('patch', WORKLOAD_RESOURCES[kind], namespace, name, {}, true);
}
