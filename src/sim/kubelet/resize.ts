// In-place resize as the kubelet of Kubernetes 1.33 carries it out (docs/sim.md, "Resize"): a
// container spec whose resources differ from what was admitted is a resize. The kubelet admits it
// against the node — `Infeasible` when the pod's requests exceed the node's allocatable, `Deferred`
// when the node has not room for them beside its other pods now (retried when a pod of the node
// shrinks or leaves) — and reports that in a `PodResizePending` condition with its own messages.
// Once admitted, a running container gets the new resources in place (NotRequired, a short runtime
// update; `PodResizeInProgress` meanwhile), or is restarted when its `resizePolicy` says
// `RestartContainer` for a resource that changed.
import { parseQuantity } from '../apiserver/defaults.js';
import type { SimTime } from '../clock.js';
import type { Clock } from '../clock.js';
import { jsonEqual } from '../json.js';
import type { KubeObject } from '../store.js';
import type { ContainerRuntimeModel } from './containers.js';
import {
  specContainers,
  specHash,
  specResources,
  type ContainerRuntime,
  type ContainerSpec,
  type PodRuntime,
  type ResourceLists,
} from './pods.js';

/**
 * From an admitted in-place resize to the status saying it is done (× time scale, ± jitter). The
 * runtime's update takes milliseconds, but the real kubelet clears `PodResizeInProgress` and
 * reports the new resources only in its next sync of the pod, after a PLEG relist (every 1 s): half
 * a relist on average (0.2 to 0.5 s seen on the real-kubelet backend).
 */
const UPDATE_RESOURCES_MS = 500;

export interface ResizeContext {
  runtime: ContainerRuntimeModel;
  time: SimTime;
  clock: Clock;
  /** The pods this kubelet runs on a node. */
  podsOn(node: string): Iterable<PodRuntime>;
  /** The pod is to be looked at again (its status changed, or a deferred resize may fit now). */
  changed(rt: PodRuntime): void;
}

/** CPU in millicores and memory in bytes, as the kubelet counts them (rounded up). */
function amount(q: string | undefined, resource: 'cpu' | 'memory'): number {
  if (q === undefined) return 0;
  const v = parseQuantity(q);
  if (!Number.isFinite(v)) return 0;
  return Math.ceil(resource === 'cpu' ? v * 1000 - 1e-9 : v - 1e-9);
}

/** A pod's requests (sum over its containers), from each container's resources. */
function podRequests(containers: Iterable<ResourceLists>): { cpu: number; memory: number } {
  let cpu = 0;
  let memory = 0;
  for (const r of containers) {
    cpu += amount(r.requests?.cpu, 'cpu');
    memory += amount(r.requests?.memory, 'memory');
  }
  return { cpu, memory };
}

/** Whether the resize of `c` from `from` to `to` restarts it: a changed resource with policy RestartContainer. */
function restarts(spec: ContainerSpec, from: ResourceLists, to: ResourceLists): boolean {
  const policies = (spec.resizePolicy as { resourceName?: string; restartPolicy?: string }[] | undefined) ?? [];
  return (['cpu', 'memory'] as const).some(
    (r) =>
      (from.requests?.[r] !== to.requests?.[r] || from.limits?.[r] !== to.limits?.[r]) &&
      policies.find((p) => p.resourceName === r)?.restartPolicy === 'RestartContainer',
  );
}

export class PodResizer {
  constructor(private readonly ctx: ResizeContext) {}

  /** Admits and carries out a resize of `pod` (run by `rt` on `node`), if its spec asks for one. */
  sync(rt: PodRuntime, pod: KubeObject, node: KubeObject): void {
    const wanted = new Map<string, { c: ContainerRuntime; spec: ContainerSpec; resources: ResourceLists }>();
    for (const spec of specContainers(pod)) {
      const c = rt.containers.get(spec.name);
      if (!c) continue;
      const resources = specResources(spec);
      if (!jsonEqual(resources, c.allocated)) wanted.set(spec.name, { c, spec, resources });
    }
    if (wanted.size === 0) rt.resizePending = undefined;
    else {
      const refusal = this.admit(rt, wanted, node);
      if (refusal) rt.resizePending = refusal;
      else {
        const shrinks = [...wanted.values()].some(({ c, resources }) => {
          const before = podRequests([c.allocated]);
          const after = podRequests([resources]);
          return after.cpu < before.cpu || after.memory < before.memory;
        });
        for (const { c, resources } of wanted.values()) c.allocated = resources;
        rt.resizePending = undefined;
        // Room freed on the node: deferred resizes of its other pods may fit now.
        if (shrinks) this.retryDeferred(rt.node, rt);
      }
    }
    this.actuate(rt, pod);
  }

  /** A pod left the node: its room may let a deferred resize through. */
  released(node: string): void {
    this.retryDeferred(node, undefined);
  }

  /** undefined when the node can hold the pod at its new size now; else why not, in the kubelet's words. */
  private admit(
    rt: PodRuntime,
    wanted: ReadonlyMap<string, { resources: ResourceLists }>,
    node: KubeObject,
  ): PodRuntime['resizePending'] {
    const allocatable = ((node.status as { allocatable?: Record<string, string> } | undefined)?.allocatable ??
      {}) as Record<string, string>;
    const capacity = { cpu: amount(allocatable.cpu, 'cpu'), memory: amount(allocatable.memory, 'memory') };
    const after = podRequests(
      [...rt.containers.values()].map((c) => wanted.get(c.spec.name)?.resources ?? c.allocated),
    );
    if (after.memory > capacity.memory)
      return {
        reason: 'Infeasible',
        message: `Node didn't have enough capacity: memory, requested: ${after.memory}, capacity: ${capacity.memory}`,
      };
    if (after.cpu > capacity.cpu)
      return {
        reason: 'Infeasible',
        message: `Node didn't have enough capacity: cpu, requested: ${after.cpu}, capacity: ${capacity.cpu}`,
      };
    const others = [...this.ctx.podsOn(rt.node)].filter((o) => o !== rt && !o.terminated);
    const used = podRequests(others.flatMap((o) => [...o.containers.values()].map((c) => c.allocated)));
    for (const r of ['cpu', 'memory'] as const) {
      if (after[r] + used[r] > capacity[r])
        return {
          reason: 'Deferred',
          message: `Node didn't have enough resource: ${r}, requested: ${after[r]}, used: ${used[r]}, capacity: ${capacity[r]}`,
        };
    }
    return undefined;
  }

  /** Gives running containers their admitted resources: in place, or by a restart (resizePolicy). */
  private actuate(rt: PodRuntime, pod: KubeObject): void {
    for (const spec of specContainers(pod)) {
      const c = rt.containers.get(spec.name);
      if (!c || jsonEqual(c.actuated, c.allocated)) continue;
      if (!c.status.state.running || rt.terminating || (c.resizing && c.status.containerID !== c.resizing.from)) {
        // A container that does not run (or one started since) has what was admitted.
        c.actuated = c.allocated;
        c.resizing = undefined;
        continue;
      }
      if (c.resizing) continue;
      if (restarts(spec, c.actuated, c.allocated)) {
        // The old container keeps its resources until it stops; the new one starts with the new.
        c.resizing = { from: c.status.containerID };
        this.ctx.runtime.restart(rt, c, spec, specHash(spec), `Container ${spec.name} resize requires restart`);
        continue;
      }
      const resizing = { from: c.status.containerID };
      c.resizing = resizing;
      const target = c.allocated;
      this.ctx.clock.setTimeout(() => {
        if (c.resizing !== resizing || !rt.alive) return;
        c.resizing = undefined;
        if (c.allocated === target) c.actuated = target;
        this.ctx.changed(rt);
      }, this.ctx.time.step(UPDATE_RESOURCES_MS));
    }
    rt.resizeInProgress = [...rt.containers.values()].some(
      (c) => c.status.state.running && !jsonEqual(c.actuated, c.allocated),
    );
  }

  private retryDeferred(node: string, except: PodRuntime | undefined): void {
    for (const o of this.ctx.podsOn(node))
      if (o !== except && o.resizePending?.reason === 'Deferred') this.ctx.changed(o);
  }
}
