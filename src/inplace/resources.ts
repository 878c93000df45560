// A container's CPU and memory as the in-place flow reads them (docs/rollout.md, "Resize"): what
// the spec asks, what the kubelet reports running (`status.containerStatuses[].resources`), what
// the plan's target makes of them, whether the kubelet restarts the container for the change (its
// `resizePolicy`), and the pod's QoS class before and after. Pure.
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { sameQuantity } from '../quantity.js';
import type { ContainerUpdate, CpuMemory, ResourceTarget } from '../plan/types.js';
import { containerStatus, specContainer } from './podView.js';

/** CPU and memory requests and limits: the part of a container's resources a resize changes. */
export type Resources = ResourceTarget;

const KINDS = ['requests', 'limits'] as const;
const NAMES = ['cpu', 'memory'] as const;
type ResourceName = (typeof NAMES)[number];

function cpuMemory(list: Record<string, string> | undefined): CpuMemory | undefined {
  if (list === undefined) return undefined;
  const out: CpuMemory = {};
  if (typeof list.cpu === 'string') out.cpu = list.cpu;
  if (typeof list.memory === 'string') out.memory = list.memory;
  return out.cpu === undefined && out.memory === undefined ? undefined : out;
}

/** CPU and memory of a `resources` object (spec or status); other resources are left out. */
function cpuMemoryOf(
  res: { requests?: Record<string, string>; limits?: Record<string, string> } | undefined,
): Resources {
  const out: Resources = {};
  const requests = cpuMemory(res?.requests);
  const limits = cpuMemory(res?.limits);
  if (requests) out.requests = requests;
  if (limits) out.limits = limits;
  return out;
}

/** What the container's spec asks for. */
export function specResources(pod: V1Pod, name: string): Resources {
  return cpuMemoryOf(specContainer(pod, name)?.resources);
}

/** What the kubelet reports the running container has; undefined when it reports none. */
export function statusResources(pod: V1Pod, name: string): Resources | undefined {
  const res = containerStatus(pod, name)?.resources;
  return res === undefined ? undefined : cpuMemoryOf(res);
}

/** The container's resources once `target` is applied: the target's quantities over the current ones. */
export function applyTarget(current: Resources, target: ResourceTarget): Resources {
  const out: Resources = {};
  for (const kind of KINDS) {
    const merged: CpuMemory = { ...current[kind], ...target[kind] };
    if (merged.cpu !== undefined || merged.memory !== undefined) out[kind] = merged;
  }
  return out;
}

/** Whether two resource sets ask for the same amounts (`100m` = `0.1`). */
export function sameResources(a: Resources, b: Resources): boolean {
  return KINDS.every((kind) => NAMES.every((r) => sameQuantity(a[kind]?.[r], b[kind]?.[r], r)));
}

/** The resources (cpu, memory) whose request or limit differs between `a` and `b`. */
function changedNames(a: Resources, b: Resources): ResourceName[] {
  return NAMES.filter((r) => KINDS.some((kind) => !sameQuantity(a[kind]?.[r], b[kind]?.[r], r)));
}

/**
 * Whether the kubelet restarts the container to go from `from` to `to`: a changed resource whose
 * `resizePolicy` is `RestartContainer` (a resource without a policy is `NotRequired`).
 */
export function resizeRestarts(container: V1Container | undefined, from: Resources, to: Resources): boolean {
  const policies = container?.resizePolicy ?? [];
  return changedNames(from, to).some(
    (r) => policies.find((p) => p.resourceName === r)?.restartPolicy === 'RestartContainer',
  );
}

/** The words for a resource set in messages and `kwave plan`: `requests cpu=100m memory=128Mi, limits memory=256Mi`. */
export function formatResources(res: Resources): string {
  const parts = KINDS.flatMap((kind) => {
    const q = res[kind];
    if (q === undefined) return [];
    const items = NAMES.filter((r) => q[r] !== undefined).map((r) => `${r}=${q[r]}`);
    return items.length ? [`${kind} ${items.join(' ')}`] : [];
  });
  return parts.length ? parts.join(', ') : 'none';
}

type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/**
 * The QoS class of a pod whose containers have these resources, as Kubernetes computes it from
 * CPU and memory: BestEffort when none sets any; Guaranteed when every container has a limit for
 * both and each request (defaulted to its limit) equals it; else Burstable.
 */
export function qosClassOf(containers: readonly Resources[]): QosClass {
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    for (const r of NAMES) {
      const req = c.requests?.[r] ?? c.limits?.[r];
      const lim = c.limits?.[r];
      if (req !== undefined || lim !== undefined) any = true;
      if (lim === undefined || !sameQuantity(req, lim, r)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** The QoS change the plan's resources would make to the pod (undefined: none, or no resize in the plan). */
export function resizeQosChange(
  plan: { update: { containers: readonly ContainerUpdate[] } },
  pod: V1Pod,
): { from: QosClass; to: QosClass } | undefined {
  const targets = new Map(plan.update.containers.flatMap((c) => (c.resources ? [[c.name, c.resources] as const] : [])));
  return targets.size === 0 ? undefined : qosChange(pod, targets);
}

/**
 * The pod's QoS class now and once every container is resized to `targets` (by container name),
 * so a resize that would change it (which the API server refuses) is refused before any write.
 */
function qosChange(
  pod: V1Pod,
  targets: ReadonlyMap<string, ResourceTarget>,
): { from: QosClass; to: QosClass } | undefined {
  const containers = pod.spec?.containers ?? [];
  const now = containers.map((c) => cpuMemoryOf(c.resources));
  const after = containers.map((c, i) => {
    const t = targets.get(c.name);
    return t ? applyTarget(now[i] as Resources, t) : (now[i] as Resources);
  });
  const from = qosClassOf(now);
  const to = qosClassOf(after);
  return from === to ? undefined : { from, to };
}
