// Turns a fixture into the cluster's objects: namespaces, nodes and pods. Pods whose images all
// run fine are created already Running and Ready (through the kubelet, which "has been running
// them"), as a real cluster looks when kwave arrives; that makes 50,000 pods a matter of seconds.
// Pods with an image that fails or crashes are created Pending and left to the kubelet to start.
import { randomUUID } from 'node:crypto';
import type { Fixture, FixtureNode, FixturePdb, FixtureWorkload } from './fixture.js';
import type { ImageTable } from './images.js';
import { parseImageRef } from './images.js';
import { jsonHash } from './json.js';
import { addServiceAccount, qosClassOf } from './apiserver/defaults.js';
import type { JsonObject } from './apiserver/json.js';
import type { Kubelet } from './kubelet.js';
import { NODE_HEALTHY } from './nodeController.js';
import type { PodCondition } from './podStatus.js';
import { frozenCopy, type KubeObject, type Store } from './store.js';
import { rfc3339 } from './clock.js';
import { embeddedWorkload, isControllerKind, type ControllerKind } from './workloads.js';

const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export interface WorldSummary {
  namespaces: number;
  nodes: number;
  pods: number;
  /** Pods created Pending for the kubelet to start (their image fails, crashes or is unknown). */
  startingPods: number;
}

/** Creates the fixture's namespaces, nodes and pods in the store. */
export function buildWorld(
  store: Store,
  kubelet: Kubelet,
  images: ImageTable,
  fixture: Fixture,
  now: () => Date = () => new Date(),
): WorldSummary {
  const pdbs = fixture.podDisruptionBudgets ?? [];
  const namespaces = new Set([
    ...SYSTEM_NAMESPACES,
    ...fixture.workloads.map((w) => w.namespace),
    ...pdbs.map((p) => p.namespace),
  ]);
  for (const name of namespaces)
    if (!store.get('namespaces', undefined, name)) store.create('namespaces', namespaceObject(name));
  const capacity = nodePodCapacity(fixture);
  fixture.nodes.forEach((n, i) => {
    if (!store.get('nodes', undefined, n.name))
      store.create('nodes', nodeObject(n, i, capacity.get(n.name) ?? 0, rfc3339(now())));
  });
  let pods = 0;
  let startingPods = 0;
  for (const w of fixture.workloads) {
    const nodes = w.nodes ?? fixture.nodes.map((n) => n.name);
    const runnable = w.containers.every((c) => {
      const info = images.lookup(c.image);
      return info && !info.pullFails && !info.crash && !('error' in parseImageRef(c.image));
    });
    const owner = isControllerKind(w.kind)
      ? seedWorkload(store, { ...w, kind: w.kind }, runnable, rfc3339(now()))
      : ownerOf(w);
    for (let i = 0; i < w.replicas; i++) {
      const manifest = podManifest(w, i, nodes[i % nodes.length]!, owner);
      // What the ServiceAccount admission plugin adds on a real create (the token volume).
      addServiceAccount(manifest.spec as JsonObject);
      const conditions = gateConditions(w, rfc3339(now()));
      if (runnable) {
        kubelet.createRunningPod(manifest, conditions);
      } else {
        store.create('pods', {
          ...manifest,
          status: { phase: 'Pending', conditions, qosClass: qosClassOf(manifest.spec as JsonObject) },
        });
        startingPods++;
      }
      pods++;
    }
  }
  kubelet.reportImages();
  // As the API server stores a new PDB: generation 1, the status still empty for the controller.
  for (const p of pdbs) {
    const body = pdbObject(p);
    store.create('poddisruptionbudgets', {
      ...body,
      metadata: { ...body.metadata, generation: 1 },
      status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
    });
  }
  return { namespaces: namespaces.size, nodes: fixture.nodes.length, pods, startingPods };
}

/** A fixture's PodDisruptionBudget as a create body (both backends). */
export function pdbObject(p: FixturePdb): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: p.name, namespace: p.namespace },
    spec: {
      selector: structuredClone(p.selector),
      ...(p.minAvailable !== undefined ? { minAvailable: p.minAvailable } : {}),
      ...(p.maxUnavailable !== undefined ? { maxUnavailable: p.maxUnavailable } : {}),
    },
  };
}

function gateConditions(w: FixtureWorkload, now: string): PodCondition[] {
  const gate = w.readinessGate;
  if (!gate || gate.condition === 'absent') return [];
  return [{ type: gate.conditionType, status: gate.condition, lastProbeTime: null, lastTransitionTime: now }];
}

interface Owner {
  ref: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller: boolean;
    blockOwnerDeletion: boolean;
  };
  labels: Record<string, string>;
  /** A controller's pods: its names, labels and per-pod spec fields. */
  podName?: (index: number) => string;
  podLabels?: (index: number, name: string) => Record<string, string>;
  podSpec?: (name: string) => JsonObject;
}

/** Stores a Deployment (and its ReplicaSet), StatefulSet or DaemonSet as its controller would leave it; the owner of its pods. */
function seedWorkload(store: Store, w: FixtureWorkload & { kind: ControllerKind }, ready: boolean, now: string): Owner {
  const seeded = embeddedWorkload(
    w,
    containerSpecs(w),
    ready && (w.readinessGate === undefined || w.readinessGate.condition === 'True'),
    now,
  );
  for (const { resource, object } of seeded.objects) store.create(resource, object);
  return {
    ref: seeded.ownerRef,
    labels: {},
    podName: seeded.podName,
    podLabels: seeded.podLabels,
    podSpec: seeded.podSpec,
  };
}

/** The containers of a workload's pods, as the API server stores them after defaulting. */
export function containerSpecs(w: FixtureWorkload): JsonObject[] {
  return w.containers.map((c) => {
    const ref = parseImageRef(c.image);
    const latest = !('error' in ref) && !ref.digest && ref.tag === 'latest';
    return {
      name: c.name,
      image: c.image,
      imagePullPolicy: c.imagePullPolicy ?? (latest ? 'Always' : 'IfNotPresent'),
      ...(c.ports?.length ? { ports: c.ports.map((p) => ({ containerPort: p, protocol: 'TCP' })) } : {}),
      // As the API server defaults it: requests from limits where only limits are given.
      resources: c.resources
        ? {
            ...(c.resources.limits ? { limits: { ...c.resources.limits } } : {}),
            ...(c.resources.requests || c.resources.limits
              ? { requests: { ...c.resources.limits, ...c.resources.requests } }
              : {}),
          }
        : {},
      ...(c.resizePolicy ? { resizePolicy: c.resizePolicy.map((p) => ({ ...p })) } : {}),
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    };
  });
}

function ownerOf(w: FixtureWorkload): Owner | undefined {
  if (!w.owner) return undefined;
  const kind = w.owner.kind;
  const hash = jsonHash({ containers: w.containers, labels: w.labels }).slice(0, 10);
  const name = w.owner.name ?? (kind === 'ReplicaSet' ? `${w.name}-${hash}` : w.name);
  const apiVersion = kind === 'Job' ? 'batch/v1' : 'apps/v1';
  const labels: Record<string, string> =
    kind === 'ReplicaSet'
      ? { 'pod-template-hash': hash }
      : kind === 'StatefulSet'
        ? { 'controller-revision-hash': `${name}-${hash}` }
        : {};
  return { ref: { apiVersion, kind, name, uid: randomUUID(), controller: true, blockOwnerDeletion: true }, labels };
}

/** What the DefaultTolerationSeconds admission plugin adds; frozen, one copy for every pod. */
const DEFAULT_TOLERATIONS = frozenCopy([
  { effect: 'NoExecute', key: 'node.kubernetes.io/not-ready', operator: 'Exists', tolerationSeconds: 300 },
  { effect: 'NoExecute', key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 300 },
]);

/** A pod as the API server stores it after defaulting. */
export function podManifest(w: FixtureWorkload, index: number, nodeName: string, owner?: Owner): KubeObject {
  const name = owner?.podName?.(index) ?? `${w.name}-${index}`;
  const labels: Record<string, string> = { ...w.labels, ...owner?.labels, ...owner?.podLabels?.(index, name) };
  if (owner?.ref.kind === 'StatefulSet') labels['statefulset.kubernetes.io/pod-name'] = name;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: w.namespace,
      labels,
      ...(w.annotations ? { annotations: { ...w.annotations } } : {}),
      ...(owner ? { ownerReferences: [owner.ref] } : {}),
    },
    spec: {
      containers: containerSpecs(w),
      ...owner?.podSpec?.(name),
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      nodeName,
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 0,
      ...(w.readinessGate ? { readinessGates: [{ conditionType: w.readinessGate.conditionType }] } : {}),
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      serviceAccount: 'default',
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
      tolerations: DEFAULT_TOLERATIONS,
    },
  };
}

export function namespaceObject(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

/**
 * Per node, the pods it must admit: those the fixture's workloads put on it (round robin over
 * their nodes), or its `maxPods` if more. A node's capacity is this or 110, whichever is more.
 */
export function nodePodCapacity(fixture: Pick<Fixture, 'nodes' | 'workloads'>): Map<string, number> {
  const pods = new Map<string, number>(fixture.nodes.map((n) => [n.name, n.maxPods ?? 0]));
  const counts = new Map<string, number>();
  for (const w of fixture.workloads) {
    const nodes = w.nodes ?? fixture.nodes.map((n) => n.name);
    for (let i = 0; i < w.replicas; i++)
      counts.set(nodes[i % nodes.length]!, (counts.get(nodes[i % nodes.length]!) ?? 0) + 1);
  }
  for (const [name, n] of counts) pods.set(name, Math.max(n, pods.get(name) ?? 0));
  return pods;
}

/** A node's CPU and memory, capacity and allocatable alike: the fixture's, by default 8 CPUs and 32Gi. */
export function nodeSize(n: FixtureNode): { cpu: string; memory: string } {
  return { cpu: n.capacity?.cpu ?? '8', memory: n.capacity?.memory ?? '32Gi' };
}

export function nodeObject(n: FixtureNode, index: number, pods: number, now: string): KubeObject {
  // One /16 per node so that even 50,000 pods on three nodes get distinct addresses.
  const podCIDR = `10.${(100 + index) % 256}.0.0/16`;
  const { cpu, memory } = nodeSize(n);
  const capacity = {
    cpu,
    'ephemeral-storage': '102350Mi',
    memory,
    pods: String(Math.max(110, pods)),
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: n.name,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': n.name,
        'kubernetes.io/os': 'linux',
        'topology.kubernetes.io/region': 'sim',
        ...(n.zone ? { 'topology.kubernetes.io/zone': n.zone } : {}),
        ...n.labels,
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: { podCIDR, podCIDRs: [podCIDR], providerID: `kwave-sim://${n.name}` },
    status: {
      addresses: [
        { type: 'InternalIP', address: `172.18.0.${(index % 250) + 2}` },
        { type: 'Hostname', address: n.name },
      ],
      allocatable: capacity,
      capacity,
      conditions: Object.entries(NODE_HEALTHY).map(([type, c]) => ({
        type,
        ...c,
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      })),
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: 'amd64',
        bootID: jsonHash(['boot', n.name]),
        containerRuntimeVersion: 'containerd://1.7.24',
        kernelVersion: '6.1.0-kwave-sim',
        kubeProxyVersion: 'v1.32.0',
        kubeletVersion: 'v1.32.0',
        machineID: jsonHash(['machine', n.name]),
        operatingSystem: 'linux',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        systemUUID: jsonHash(['uuid', n.name]),
      },
    },
  };
}
