// What the kubelet keeps per pod and per container, and the pure readings of a pod it needs
// (its containers, readiness gates, the pull policy the API server defaults, the status it reports).
import type { ImageRef } from '../images.js';
import { podConditions, podPhase, type ContainerStatus, type PodCondition } from '../podStatus.js';
import type { KubeObject } from '../store.js';
import { qosClassOf } from '../apiserver/defaults.js';
import type { JsonObject } from '../apiserver/json.js';
import { sameMembers } from '../../sameMembers.js';
import { jsonEqual, jsonHash } from '../json.js';

/** The parts of a container spec the kubelet reads. */
export interface ContainerSpec {
  name: string;
  image: string;
  imagePullPolicy?: string;
  [key: string]: unknown;
}

/** A container's `resources` (requests and limits, every resource) as the spec writes them. */
export interface ResourceLists {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface ContainerRuntime {
  spec: ContainerSpec;
  /** Hash of the spec the current (or next) container runs, resources left out (specHash); a different one means restart. */
  hash: string;
  /** The resources the kubelet admitted for the container (status `allocatedResources`). */
  allocated: ResourceLists;
  /** The resources the running container has (status `resources`); a resize changes them (resize.ts). */
  actuated: ResourceLists;
  /**
   * A resize of the running container is under way: an UpdateContainerResources (NotRequired), or
   * a restart (RestartContainer) of the container `from`.
   */
  resizing?: { from: string | undefined };
  status: ContainerStatus;
  /** Bumped whenever the container's lifecycle starts over; stale timer callbacks see it and stop. */
  epoch: number;
  timer?: unknown;
  pullFailures: number;
  crashes: number;
  /**
   * A sync that ends with this container started is under way (its kill, pull or create): the
   * kubelet reads a newer spec only after it, so the container starts anyway.
   */
  starting?: boolean;
  /** The newer spec read while `starting` (and its hash): the container is restarted with it once started. */
  next?: { spec: ContainerSpec; hash: string };
}

export interface PodRuntime {
  key: string;
  uid: string;
  namespace: string;
  name: string;
  node: string;
  hostIP: string;
  podIP: string;
  startTime: string;
  containers: Map<string, ContainerRuntime>;
  sandboxReady: boolean;
  /** spec.restartPolicy (default Always): with Never or OnFailure a container that exited 0 stays exited. */
  restartPolicy: 'Always' | 'Never' | 'OnFailure';
  /** Deletion seen: containers are being stopped. */
  terminating: boolean;
  /** Every container stopped; the pod waits to be removed. */
  terminated: boolean;
  podTimer?: unknown;
  alive: boolean;
  /** resourceVersion of the kubelet's own last write of the pod. */
  writtenVersion?: string;
  /** The status the kubelet last wrote (built afresh per write, never changed after). */
  writtenStatus?: Record<string, unknown>;
  /** A write of this pod is on its way (asynchronous ports): the next one waits for it. */
  inFlight?: boolean;
  /** A resize the kubelet could not admit: its PodResizePending condition (resize.ts). */
  resizePending?: { reason: 'Deferred' | 'Infeasible'; message: string };
  /** A running container's resources differ from the admitted ones: PodResizeInProgress. */
  resizeInProgress?: boolean;
}

/**
 * The hash that decides whether a container is restarted: its spec without `resources` and
 * `resizePolicy`, as the kubelet hashes it with in-place resize on (a resize is no new spec).
 */
export function specHash(spec: ContainerSpec): string {
  const { resources: _r, resizePolicy: _p, ...rest } = spec;
  return jsonHash(rest);
}

/** The spec's resources, as the kubelet admits them at start. */
export function specResources(spec: ContainerSpec): ResourceLists {
  const res = spec.resources as ResourceLists | undefined;
  const out: ResourceLists = {};
  if (res?.requests && Object.keys(res.requests).length) out.requests = { ...res.requests };
  if (res?.limits && Object.keys(res.limits).length) out.limits = { ...res.limits };
  return out;
}

export { rfc3339 } from '../clock.js';
export const podKey = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export function specContainers(pod: KubeObject): ContainerSpec[] {
  const spec = pod.spec as { containers?: ContainerSpec[] } | undefined;
  return spec?.containers ?? [];
}

function readinessGates(pod: KubeObject): string[] {
  const spec = pod.spec as { readinessGates?: { conditionType: string }[] } | undefined;
  return (spec?.readinessGates ?? []).map((g) => g.conditionType);
}

export function nodeNameOf(pod: KubeObject): string | undefined {
  return (pod.spec as { nodeName?: string } | undefined)?.nodeName;
}

export function nodeInternalIP(node: KubeObject | undefined): string {
  const status = node?.status as { addresses?: { type: string; address: string }[] } | undefined;
  return status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '10.0.0.1';
}

export function nodePodCIDR(node: KubeObject): string | undefined {
  return (node.spec as { podCIDR?: string } | undefined)?.podCIDR;
}

/**
 * Commands that exit at once with code 0 (`true`, `sh -c true`, `sh -c 'exit 0'`): the simulated
 * images run a server forever, except with one of these (a pre-pull's puller pod runs one).
 */
const EXITS_AT_ONCE = new Set([
  'true',
  '/bin/true',
  '/usr/bin/true',
  'sh -c true',
  '/bin/sh -c true',
  'sh -c exit 0',
  '/bin/sh -c exit 0',
]);

export function exitsAtOnce(spec: ContainerSpec): boolean {
  const argv = [...((spec.command as string[] | undefined) ?? []), ...((spec.args as string[] | undefined) ?? [])];
  return argv.length > 0 && EXITS_AT_ONCE.has(argv.join(' '));
}

export function restartPolicyOf(pod: KubeObject): PodRuntime['restartPolicy'] {
  const p = (pod.spec as { restartPolicy?: string } | undefined)?.restartPolicy;
  return p === 'Never' || p === 'OnFailure' ? p : 'Always';
}

/** The pull policy the API server defaults: Always for `:latest` or no tag, else IfNotPresent. */
export function pullPolicy(spec: ContainerSpec, ref: ImageRef): string {
  if (spec.imagePullPolicy) return spec.imagePullPolicy;
  return !ref.digest && ref.tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/**
 * The status the kubelet reports for a pod: phase, conditions (others' conditions kept first,
 * its own recomputed), addresses, start time and container statuses; other fields of the stored
 * status are kept.
 */
export function podStatusFor(
  rt: PodRuntime,
  pod: KubeObject,
  conditionsNow: readonly PodCondition[],
  now: string,
): Record<string, unknown> {
  const specs = specContainers(pod);
  const statuses = specs
    .map((s) => {
      const c = rt.containers.get(s.name);
      return c && withResources(c);
    })
    .filter((s): s is ContainerStatus => s !== undefined);
  const old = (pod.status ?? {}) as Record<string, unknown>;
  const phase = podPhase(statuses, rt.terminated, rt.restartPolicy);
  const completed = phase === 'Succeeded' || phase === 'Failed';
  return {
    ...old,
    phase,
    conditions: podConditions(
      conditionsNow,
      {
        specNames: specs.map((s) => s.name),
        statuses,
        gates: readinessGates(pod),
        sandboxReady: rt.sandboxReady && !completed,
        completed,
        resize: [
          ...(rt.resizePending ? [{ type: 'PodResizePending', status: 'True' as const, ...rt.resizePending }] : []),
          ...(rt.resizeInProgress ? [{ type: 'PodResizeInProgress', status: 'True' as const }] : []),
        ],
      },
      now,
    ),
    hostIP: rt.hostIP,
    hostIPs: oneIP(old.hostIPs, rt.hostIP),
    podIP: rt.podIP,
    podIPs: oneIP(old.podIPs, rt.podIP),
    startTime: rt.startTime,
    containerStatuses: sameItems(old.containerStatuses, statuses) ? old.containerStatuses : statuses,
    qosClass: old.qosClass ?? qosClassOf((pod.spec ?? {}) as JsonObject),
  };
}

/**
 * The container's status with the resources the kubelet reports (in-place resize on, 1.33): what
 * the running container has, else what was admitted; `allocatedResources` the admitted requests.
 * The status object itself when it already says so (it is shared with the stored status).
 */
function withResources(c: ContainerRuntime): ContainerStatus {
  const resources = c.status.state.running ? c.actuated : c.allocated;
  const allocatedResources = c.allocated.requests;
  if (jsonEqual(c.status.resources, resources) && jsonEqual(c.status.allocatedResources, allocatedResources))
    return c.status;
  const out: ContainerStatus = { ...c.status, resources };
  if (allocatedResources) out.allocatedResources = allocatedResources;
  else delete out.allocatedResources;
  return out;
}

// The parts of the stored status that did not change are kept as they are (frozen, shared by the
// versions of the pod), not rebuilt: fewer objects made per write, and fewer to decode or compare.

/** `[{ ip }]`, the stored list when it is just that. */
function oneIP(stored: unknown, ip: string): readonly { ip: string }[] {
  if (Array.isArray(stored) && stored.length === 1) {
    const only: unknown = stored[0];
    if (typeof only === 'object' && only !== null && sameMembers(only, { ip })) return stored as { ip: string }[];
  }
  return [{ ip }];
}

/** `stored` is a list holding the very same items as `items`. */
function sameItems(stored: unknown, items: readonly unknown[]): boolean {
  return Array.isArray(stored) && stored.length === items.length && items.every((x, i) => x === stored[i]);
}
