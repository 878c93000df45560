// Fixture workloads of kind Deployment, StatefulSet and DaemonSet as apps/v1 objects. Pure.
// - The real backend POSTs `workloadObject` and its controllers make the pods (real names,
//   real controller-revision-hash / pod-template-hash labels, real ownerReferences).
// - The embedded backend runs no controllers: `embeddedWorkload` gives the objects as a settled
//   controller would leave them (a Deployment with its ReplicaSet, statuses counted) and how to
//   name and label the pods it seeds with their ownerReferences. Nothing reconciles them after:
//   a deleted pod stays deleted, a template change restarts nothing.
import { randomUUID } from 'node:crypto';
import type { FixtureWorkload } from './fixture.js';
import { jsonHash } from './json.js';
import type { AppsResource, KubeObject } from './store.js';
import type { JsonObject } from './apiserver/json.js';

export type ControllerKind = 'Deployment' | 'StatefulSet' | 'DaemonSet';

export const isControllerKind = (kind: FixtureWorkload['kind']): kind is ControllerKind =>
  kind === 'Deployment' || kind === 'StatefulSet' || kind === 'DaemonSet';

const RESOURCE: Record<ControllerKind | 'ReplicaSet', AppsResource> = {
  Deployment: 'deployments',
  ReplicaSet: 'replicasets',
  StatefulSet: 'statefulsets',
  DaemonSet: 'daemonsets',
};

/** The pod template: the workload's labels, annotations, containers and readiness gate; `nodes` as a node affinity. */
function podTemplate(w: FixtureWorkload, containers: JsonObject[]): JsonObject {
  const nodes = w.nodes;
  return {
    metadata: { labels: { ...w.labels }, ...(w.annotations ? { annotations: { ...w.annotations } } : {}) },
    spec: {
      containers,
      ...(w.readinessGate ? { readinessGates: [{ conditionType: w.readinessGate.conditionType }] } : {}),
      ...(nodes
        ? {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [...nodes] }] },
                  ],
                },
              },
            },
          }
        : {}),
    },
  };
}

/**
 * The object to create on a real API server. A StatefulSet gets `podManagementPolicy: Parallel`:
 * its pods become Ready only once something sets their gate condition, which OrderedReady would
 * wait for before creating the next one.
 */
export function workloadObject(w: FixtureWorkload & { kind: ControllerKind }, containers: JsonObject[]): KubeObject {
  const template = podTemplate(w, containers);
  const selector = { matchLabels: { ...w.labels } };
  const strategy = { type: w.updateStrategy ?? 'RollingUpdate' };
  const spec: JsonObject =
    w.kind === 'Deployment'
      ? {
          replicas: w.replicas,
          selector,
          template,
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
        }
      : w.kind === 'StatefulSet'
        ? {
            replicas: w.replicas,
            selector,
            template,
            serviceName: w.name,
            podManagementPolicy: 'Parallel',
            updateStrategy: strategy,
          }
        : { selector, template, updateStrategy: strategy };
  return {
    apiVersion: 'apps/v1',
    kind: w.kind,
    metadata: { name: w.name, namespace: w.namespace, labels: { ...w.labels } },
    spec,
  };
}

/** What the embedded world stores for a workload, and how it names and labels the pods it seeds. */
export interface EmbeddedWorkload {
  objects: { resource: AppsResource; object: KubeObject }[];
  /** The pods' controller: the ReplicaSet of a Deployment, else the workload. */
  ownerRef: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller: boolean;
    blockOwnerDeletion: boolean;
  };
  podName(index: number): string;
  /** Labels the controller adds to its pods. */
  podLabels(index: number, name: string): Record<string, string>;
  /** Spec fields the controller sets per pod (a StatefulSet pod's hostname and subdomain). */
  podSpec(name: string): JsonObject;
}

// The alphabet Kubernetes uses for generated name suffixes (no vowels, no look-alikes).
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';
function safe(hex: string, length: number): string {
  let out = '';
  for (let i = 0; out.length < length; i++)
    out += SAFE[parseInt(hex.slice((i * 2) % hex.length, ((i * 2) % hex.length) + 2), 16) % SAFE.length];
  return out;
}

/** `ready`: whether the seeded pods start Ready (the statuses count them). */
export function embeddedWorkload(
  w: FixtureWorkload & { kind: ControllerKind },
  containers: JsonObject[],
  ready: boolean,
  now: string,
): EmbeddedWorkload {
  const main = workloadObject(w, containers);
  const template = podTemplate(w, containers);
  const n = w.replicas;
  const readyCount = ready ? n : 0;
  const uid = randomUUID();
  const meta = (name: string, objUid: string, extra: JsonObject = {}) => ({
    name,
    namespace: w.namespace,
    uid: objUid,
    generation: 1,
    creationTimestamp: now,
    labels: { ...w.labels },
    ...extra,
  });
  const ref = (kind: string, name: string, refUid: string) => ({
    apiVersion: 'apps/v1',
    kind,
    name,
    uid: refUid,
    controller: true,
    blockOwnerDeletion: true,
  });
  const hash = safe(jsonHash(template), 10);
  const object = (status: JsonObject, extraMeta: JsonObject = {}): KubeObject => ({
    ...main,
    metadata: meta(w.name, uid, extraMeta),
    status: { observedGeneration: 1, ...status },
  });

  if (w.kind === 'Deployment') {
    const rsName = `${w.name}-${hash}`;
    const rsUid = randomUUID();
    const available = {
      type: 'Available',
      status: ready ? 'True' : 'False',
      reason: ready ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
      lastUpdateTime: now,
      lastTransitionTime: now,
    };
    const deployment = object(
      {
        replicas: n,
        updatedReplicas: n,
        readyReplicas: readyCount,
        availableReplicas: readyCount,
        ...(ready ? {} : { unavailableReplicas: n }),
        conditions: [available],
      },
      { annotations: { 'deployment.kubernetes.io/revision': '1' } },
    );
    const rsTemplate = {
      ...template,
      metadata: { ...(template.metadata as JsonObject), labels: { ...w.labels, 'pod-template-hash': hash } },
    };
    const replicaSet: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: meta(rsName, rsUid, {
        labels: { ...w.labels, 'pod-template-hash': hash },
        annotations: { 'deployment.kubernetes.io/revision': '1' },
        ownerReferences: [ref('Deployment', w.name, uid)],
      }),
      spec: {
        replicas: n,
        selector: { matchLabels: { ...w.labels, 'pod-template-hash': hash } },
        template: rsTemplate,
      },
      status: {
        observedGeneration: 1,
        replicas: n,
        fullyLabeledReplicas: n,
        readyReplicas: readyCount,
        availableReplicas: readyCount,
      },
    };
    return {
      objects: [
        { resource: RESOURCE.Deployment, object: deployment },
        { resource: RESOURCE.ReplicaSet, object: replicaSet },
      ],
      ownerRef: ref('ReplicaSet', rsName, rsUid),
      podName: (i) => `${rsName}-${safe(jsonHash([rsName, i]), 5)}`,
      podLabels: () => ({ 'pod-template-hash': hash }),
      podSpec: () => ({}),
    };
  }
  const revision = `${w.name}-${hash}`;
  if (w.kind === 'StatefulSet') {
    const sts = object({
      replicas: n,
      readyReplicas: readyCount,
      currentReplicas: n,
      updatedReplicas: n,
      availableReplicas: readyCount,
      currentRevision: revision,
      updateRevision: revision,
      collisionCount: 0,
    });
    return {
      objects: [{ resource: RESOURCE.StatefulSet, object: sts }],
      ownerRef: ref('StatefulSet', w.name, uid),
      podName: (i) => `${w.name}-${i}`,
      podLabels: (i, name) => ({
        'controller-revision-hash': revision,
        'statefulset.kubernetes.io/pod-name': name,
        'apps.kubernetes.io/pod-index': String(i),
      }),
      podSpec: (name) => ({ hostname: name, subdomain: w.name }),
    };
  }
  const ds = object({
    desiredNumberScheduled: n,
    currentNumberScheduled: n,
    updatedNumberScheduled: n,
    numberReady: readyCount,
    numberAvailable: readyCount,
    numberMisscheduled: 0,
    ...(ready ? {} : { numberUnavailable: n }),
  });
  return {
    objects: [{ resource: RESOURCE.DaemonSet, object: ds }],
    ownerRef: ref('DaemonSet', w.name, uid),
    podName: (i) => `${w.name}-${safe(jsonHash([w.name, i]), 5)}`,
    podLabels: () => ({ 'controller-revision-hash': hash, 'pod-template-generation': '1' }),
    podSpec: () => ({}),
  };
}
