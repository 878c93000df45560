// What the plan changes in one pod, container by container: new images (the spec names another
// image) and resizes (the spec asks for other CPU or memory than the target makes of it), and
// whether the change restarts a container and so takes the pod out of service. Pure; shared by
// `decide` and `kwave plan`'s per-pod view.
import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerUpdate, DrainPolicy } from '../plan/types.js';
import { sameImage } from './image.js';
import { specContainer } from './podView.js';
import { applyTarget, resizeRestarts, sameResources, specResources, type Resources } from './resources.js';

interface Resize {
  name: string;
  from: Resources;
  to: Resources;
  /** The container's `resizePolicy` restarts it for this change. */
  restarts: boolean;
}

export interface PodChanges {
  /** Containers whose spec names another image than the target. */
  images: (ContainerUpdate & { image: string })[];
  /** Containers whose spec asks for other resources than the target makes of them. */
  resizes: Resize[];
}

export function podChanges(pod: V1Pod, containers: readonly ContainerUpdate[]): PodChanges {
  const images: PodChanges['images'] = [];
  const resizes: Resize[] = [];
  for (const c of containers) {
    const spec = specContainer(pod, c.name);
    if (c.image !== undefined && !sameImage(spec?.image ?? '', c.image)) images.push({ ...c, image: c.image });
    if (c.resources !== undefined) {
      const from = specResources(pod, c.name);
      const to = applyTarget(from, c.resources);
      if (!sameResources(from, to)) resizes.push({ name: c.name, from, to, restarts: resizeRestarts(spec, from, to) });
    }
  }
  return { images, resizes };
}

/** Whether the change restarts a container: a new image, or a resize whose policy restarts it. */
function restartsContainer(changes: PodChanges): boolean {
  return changes.images.length > 0 || changes.resizes.some((r) => r.restarts);
}

/** Whether the pod is drained for the change: always, or (`whenRestarting`, the default) when it restarts a container. */
export function drainsFor(changes: PodChanges, policy: DrainPolicy | undefined): boolean {
  return policy === 'always' || restartsContainer(changes);
}

/** Whether a plan's update resizes anything (then it needs `pods/resize`). */
export function resizesAny(containers: readonly ContainerUpdate[]): boolean {
  return containers.some((c) => c.resources !== undefined);
}
