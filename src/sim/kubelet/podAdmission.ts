// How the kubelet takes up a pod: a new runtime for it (address, start time), and its containers
// either carried on as already running or started; or, for a fixture, created running at once.
import type { Clock } from '../clock.js';
import { parseImageRef, type ImageTable } from '../images.js';
import type { PodIpam } from '../ipam.js';
import type { ContainerStatus } from '../podStatus.js';
import type { KubeObject } from '../store.js';
import type { ContainerRuntimeModel } from './containers.js';
import {
  nodeInternalIP,
  nodePodCIDR,
  podKey,
  restartPolicyOf,
  rfc3339,
  specContainers,
  specHash,
  specResources,
  type ContainerRuntime,
  type PodRuntime,
} from './pods.js';

/** What taking up a pod needs of the kubelet. */
export interface AdmissionContext {
  images: ImageTable;
  runtime: ContainerRuntimeModel;
  ipam: PodIpam;
  clock: Clock;
  /** Puts an image in the node's cache. */
  addImage(node: string, fullName: string): void;
}

/** What a bound pod's status already says, if anything (the kubelet restarted, or the world made it so). */
export interface KnownStatus {
  startTime?: string;
  podIP?: string;
  containerStatuses?: ContainerStatus[];
}

export function newPodRuntime(
  ctx: AdmissionContext,
  pod: KubeObject,
  node: KubeObject,
  status: { startTime?: string; podIP?: string },
  containers: Map<string, ContainerRuntime>,
): PodRuntime {
  return {
    key: podKey(pod.metadata.namespace, pod.metadata.name),
    uid: pod.metadata.uid ?? '',
    namespace: pod.metadata.namespace ?? 'default',
    name: pod.metadata.name,
    node: node.metadata.name,
    hostIP: nodeInternalIP(node),
    podIP: status.podIP ?? ctx.ipam.allocate(node.metadata.name, nodePodCIDR(node)),
    startTime: status.startTime ?? rfc3339(ctx.clock.now()),
    containers,
    sandboxReady: true,
    restartPolicy: restartPolicyOf(pod),
    terminating: false,
    terminated: false,
    alive: true,
  };
}

/**
 * The runtime of a pod the kubelet "has been running for a while": containers running and
 * ready. Every image must be in the table and pull fine.
 */
export function runningPodRuntime(ctx: AdmissionContext, manifest: KubeObject, node: KubeObject): PodRuntime {
  const nodeName = node.metadata.name;
  const now = rfc3339(ctx.clock.now());
  const containers = new Map<string, ContainerRuntime>();
  for (const spec of specContainers(manifest)) {
    const ref = parseImageRef(spec.image);
    const info = 'error' in ref ? undefined : ctx.images.resolve(ref);
    if ('error' in ref || !info || info.pullFails || info.crash)
      throw new Error(`pod ${manifest.metadata.name}: image "${spec.image}" cannot run`);
    ctx.addImage(nodeName, ref.fullName);
    containers.set(spec.name, {
      spec,
      hash: specHash(spec),
      allocated: specResources(spec),
      actuated: specResources(spec),
      epoch: 0,
      pullFailures: 0,
      crashes: 0,
      status: ctx.runtime.runningStatus(spec, ref, info, now),
    });
  }
  return newPodRuntime(ctx, manifest, node, { startTime: now }, containers);
}

/** A pod newly bound to a node: take up containers already running (per its status), start the others. */
export function admitContainers(
  ctx: AdmissionContext,
  rt: PodRuntime,
  pod: KubeObject,
  node: KubeObject,
  status: KnownStatus,
): void {
  for (const spec of specContainers(pod)) {
    const known = status.containerStatuses?.find((s) => s.name === spec.name);
    const ref = parseImageRef(spec.image);
    const c: ContainerRuntime = {
      spec,
      hash: specHash(spec),
      allocated: specResources(spec),
      actuated: specResources(spec),
      epoch: 0,
      pullFailures: 0,
      crashes: 0,
      status: {
        name: spec.name,
        state: { waiting: { reason: 'ContainerCreating' } },
        lastState: {},
        ready: false,
        restartCount: 0,
        image: spec.image,
        imageID: '',
        started: false,
      },
    };
    rt.containers.set(spec.name, c);
    if (known?.state.running && !('error' in ref) && known.image === ref.fullName) {
      // Already running (the kubelet restarted, or the world made it so): carry on with it.
      c.status = structuredClone(known);
      ctx.addImage(node.metadata.name, ref.fullName);
      ctx.runtime.carryOn(rt, c, ctx.images.resolve(ref));
    } else if (!pod.metadata.deletionTimestamp) {
      ctx.runtime.beginStart(rt, c);
    }
  }
}
