// Which pods a plan selects, and which of them are already at the target image. Pure.
import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerUpdate, LabelSelector, Plan } from '../plan/types.js';
import { digestOf, sameImage } from '../inplace/image.js';
import { conditionStatus, containerStatus, specContainer } from '../inplace/podView.js';

/**
 * Whether `labels` satisfy a Kubernetes LabelSelector: every `matchLabels` pair and every
 * expression (ANDed). `In`: the key is set to one of the values; `NotIn`: the key is absent or
 * set to none of them; `Exists` / `DoesNotExist`: the key is / is not set. An empty selector
 * matches every pod, as in Kubernetes. (`In` with no values matches nothing; the plan loader
 * refuses it anyway.)
 */
export function matchesSelector(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  const has = (k: string) => Object.prototype.hasOwnProperty.call(l, k);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(key) || l[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!has(req.key) || !values.includes(l[req.key] as string)) return false;
        break;
      case 'NotIn':
        if (has(req.key) && values.includes(l[req.key] as string)) return false;
        break;
      case 'Exists':
        if (!has(req.key)) return false;
        break;
      case 'DoesNotExist':
        if (has(req.key)) return false;
        break;
    }
  }
  return true;
}

/**
 * The selector as the `labelSelector` query string of a list or watch call:
 * `app=web,tier in (a,b),!canary`. matchLabels first (by key), then the expressions in plan
 * order; values sorted, so equal selectors give equal strings. The empty selector is `''`
 * (everything).
 */
export function renderSelector(selector: LabelSelector): string {
  const parts: string[] = [];
  const labels = selector.matchLabels ?? {};
  for (const key of Object.keys(labels).sort()) parts.push(`${key}=${labels[key]}`);
  for (const req of selector.matchExpressions ?? []) {
    const values = [...(req.values ?? [])].sort().join(',');
    switch (req.operator) {
      case 'In':
        parts.push(`${req.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${req.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(req.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${req.key}`);
        break;
    }
  }
  return parts.join(',');
}

/**
 * Whether a container runs `target`: its spec names the target, its status reports the target
 * image (and, for a digest-pinned target, that digest in `imageID`), and it is running.
 * A container whose spec already names the target but whose kubelet has not restarted it still
 * reports the old image in its status: not at target.
 */
export function containerAtTarget(pod: V1Pod, update: ContainerUpdate): boolean {
  const spec = specContainer(pod, update.name);
  const status = containerStatus(pod, update.name);
  if (spec?.image === undefined || status === undefined) return false;
  if (!sameImage(spec.image, update.image)) return false;
  if (!status.state?.running) return false;
  const pinned = digestOf(update.image);
  if (pinned !== undefined) return digestOf(status.imageID ?? '') === pinned;
  return sameImage(status.image ?? '', update.image);
}

/**
 * Whether a pod is already where the plan wants it, so it is skipped (and counts toward the wave
 * targets): every updated container is at its target (`containerAtTarget`) and the pod is not
 * held out of service by the gate (`False`). A pod at the target images whose gate is still
 * False is mid-flight (a run stopped between completion and reopening the gate): it is not done
 * until the gate opens, so it stays on the to-do list, where the flow reopens it.
 */
export function isAtTarget(pod: V1Pod, plan: Pick<Plan, 'update' | 'readinessGate'>): boolean {
  if (conditionStatus(pod, plan.readinessGate.conditionType) === 'False') return false;
  return plan.update.containers.every((c) => containerAtTarget(pod, c));
}
