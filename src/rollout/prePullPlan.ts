// Image pre-pull, the pure part: which nodes of a wave lack which target images, and the puller
// pod that pulls them there (one per node: `nodeName` set, the target images, a command that
// exits at once, restartPolicy Never, the pods' tolerations and image pull secrets, zero
// requests, labelled and owned for clean-up), and how to read a puller's status.
import type { V1Node, V1Pod, V1Toleration } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { sameImage } from '../inplace/image.js';
import { specContainer } from '../inplace/podView.js';
import type { ContainerUpdate } from '../plan/types.js';

export const PRE_PULL_LABEL = 'kwave.dev/pre-pull';
/** The command a puller's containers run: it exits at once; the pull is what matters. */
const PULLER_COMMAND = ['/bin/true'];

/** One node to pull on. */
export interface PullTarget {
  node: string;
  /** Where the puller pod goes: the namespace of the node's first wave pod (its pull secrets live there). */
  namespace: string;
  /** Target images the node lacks, sorted. */
  images: string[];
  tolerations: V1Toleration[];
  imagePullSecrets: string[];
}

export interface PullPlan {
  targets: PullTarget[];
  /** Nodes that already hold every target image (node status.images). */
  skipped: string[];
}

/** Whether the node's status.images lists `image` (by tag, or by digest for a digest reference). */
export function nodeHasImage(node: V1Node | undefined, image: string): boolean {
  return (node?.status?.images ?? []).some((i) => (i.names ?? []).some((name) => sameImage(name, image)));
}

/**
 * The nodes hosting `pods` and the target images each lacks. Pods on no node are left out (no
 * node to pull on yet). Deterministic: nodes and images sorted.
 */
export function prePullPlan(
  pods: readonly V1Pod[],
  containers: readonly ContainerUpdate[],
  nodeOf: (name: string) => V1Node | undefined,
): PullPlan {
  const byNode = new Map<
    string,
    { namespace: string; images: Set<string>; tolerations: Map<string, V1Toleration>; secrets: Set<string> }
  >();
  for (const pod of [...pods].sort((a, b) =>
    `${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(`${b.metadata?.namespace}/${b.metadata?.name}`),
  )) {
    const node = pod.spec?.nodeName;
    if (!node) continue;
    const entry = byNode.get(node) ?? {
      namespace: pod.metadata?.namespace ?? 'default',
      images: new Set<string>(),
      tolerations: new Map(),
      secrets: new Set<string>(),
    };
    for (const c of containers) {
      const current = specContainer(pod, c.name);
      if (current && c.image !== undefined && !sameImage(current.image ?? '', c.image)) entry.images.add(c.image);
    }
    // Only pods of the puller's namespace lend it their pull secrets (a secret is namespaced).
    if (pod.metadata?.namespace === entry.namespace)
      for (const s of pod.spec?.imagePullSecrets ?? []) if (s.name) entry.secrets.add(s.name);
    for (const t of pod.spec?.tolerations ?? []) entry.tolerations.set(JSON.stringify(t), t);
    byNode.set(node, entry);
  }
  const targets: PullTarget[] = [];
  const skipped: string[] = [];
  for (const [node, e] of [...byNode].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const images = [...e.images].filter((i) => !nodeHasImage(nodeOf(node), i)).sort();
    if (images.length === 0) {
      skipped.push(node);
      continue;
    }
    targets.push({
      node,
      namespace: e.namespace,
      images,
      tolerations: [...e.tolerations.values()],
      imagePullSecrets: [...e.secrets].sort(),
    });
  }
  return { targets, skipped };
}

/** `kwave-pull-<plan>-w<wave>-<hash of node>`, at most 63 characters (a DNS label, as pod names may be). */
export function pullerName(plan: string, wave: number, node: string): string {
  const hash = createHash('sha256').update(node).digest('hex').slice(0, 8);
  const tail = `-w${wave}-${hash}`;
  return `kwave-pull-${plan}`.slice(0, 63 - tail.length).replace(/-+$/, '') + tail;
}

export interface PullerOwner {
  /** The rollout record ConfigMap, when it lives in the puller's namespace (owners must). */
  name: string;
  uid: string;
  namespace: string;
}

/** The puller pod's manifest for `target`. */
export function pullerPod(
  plan: string,
  wave: number,
  target: PullTarget,
  owner?: PullerOwner,
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: pullerName(plan, wave, target.node),
      namespace: target.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'kwave', 'kwave.dev/plan': plan, [PRE_PULL_LABEL]: plan },
      annotations: { 'kwave.dev/pre-pull-node': target.node, 'kwave.dev/pre-pull-wave': String(wave) },
      ...(owner && owner.namespace === target.namespace
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid }] }
        : {}),
    },
    spec: {
      nodeName: target.node,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      tolerations: target.tolerations,
      ...(target.imagePullSecrets.length > 0
        ? { imagePullSecrets: target.imagePullSecrets.map((name) => ({ name })) }
        : {}),
      containers: target.images.map((image, i) => ({
        name: `pull-${i}`,
        image,
        imagePullPolicy: 'IfNotPresent',
        command: PULLER_COMMAND,
        resources: { requests: { cpu: '0', memory: '0' }, limits: {} },
      })),
    },
  };
}

const PULL_FAILURES = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

export type PullVerdict =
  { kind: 'pulled' } | { kind: 'pending' } | { kind: 'failed'; image: string; reason: string; message: string };

/**
 * What a puller pod's status says: pulled once every container has its image (an imageID, or it
 * ran: a command missing from the image still proves the pull), failed on a pull error, else pending.
 */
export function pullVerdict(pod: V1Pod): PullVerdict {
  const specs = pod.spec?.containers ?? [];
  const statuses = pod.status?.containerStatuses ?? [];
  let pulled = 0;
  for (const spec of specs) {
    const s = statuses.find((x) => x.name === spec.name);
    if (!s) continue;
    const waiting = s.state?.waiting;
    if (waiting?.reason && PULL_FAILURES.has(waiting.reason))
      return {
        kind: 'failed',
        image: spec.image ?? '',
        reason: waiting.reason,
        message: waiting.message ?? waiting.reason,
      };
    if ((s.imageID ?? '') !== '' || s.state?.terminated || s.state?.running) pulled++;
  }
  return pulled === specs.length && specs.length > 0 ? { kind: 'pulled' } : { kind: 'pending' };
}
