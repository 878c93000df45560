// The kubelet's port onto a real API server: reads from the agent's pod watch, status writes as
// a kubelet's status manager sends them (a strategic-merge PATCH of pods/status with the pod's
// uid as precondition, carrying only what the kubelet owns, so conditions others set — readiness
// gates — are never overwritten), Events POSTed, and the final DELETE with grace 0 and a uid
// precondition once the containers of a deleted pod stopped, as a real kubelet does (docs/sim-api.md).
import type { KubeletEventInput, KubeletPort } from '../kubelet/port.js';
import { StaleWrite } from '../kubelet/port.js';
import { KUBELET_CONDITIONS, RESIZE_CONDITIONS, type PodCondition } from '../podStatus.js';
import type { KubeObject } from '../store.js';
import type { HttpEventRecorder } from './eventRecorder.js';
import { KubeHttpError, type KubeHttp } from './kubeHttp.js';
import type { PodWatch } from './podWatch.js';

const KUBELET_OWNED = new Set<string>([...KUBELET_CONDITIONS, ...RESIZE_CONDITIONS]);
/** The status fields the kubelet reports (everything else of a pod's status is someone else's). */
const OWNED_FIELDS = ['phase', 'hostIP', 'hostIPs', 'podIP', 'podIPs', 'startTime', 'containerStatuses'] as const;

const podPath = (pod: KubeObject) => `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`;

/** The strategic-merge patch that takes a pod's status to `status`, for what the kubelet owns. */
export function statusPatch(pod: KubeObject, status: Record<string, unknown>): Record<string, unknown> {
  const conditions = (status.conditions as PodCondition[] | undefined) ?? [];
  const own: Record<string, unknown> = {};
  for (const f of OWNED_FIELDS) if (status[f] !== undefined) own[f] = status[f];
  // A resize condition the kubelet no longer reports (the resize was admitted, or is done) is removed.
  const storedConditions = (pod.status as { conditions?: PodCondition[] } | undefined)?.conditions ?? [];
  const stored = storedConditions.map((c) => c.type);
  const cleared = RESIZE_CONDITIONS.filter((t) => stored.includes(t) && !conditions.some((c) => c.type === t));
  // A reason or message a condition no longer has is removed (null), as the status manager's
  // two-way merge patch removes it: else Ready turned True would keep `ContainersNotReady`.
  const dropped = (c: PodCondition) => {
    const was = storedConditions.find((s) => s.type === c.type);
    return Object.fromEntries(
      (['reason', 'message'] as const)
        .filter((f) => was?.[f] !== undefined && c[f] === undefined)
        .map((f) => [f, null]),
    );
  };
  return {
    metadata: { uid: pod.metadata.uid },
    status: {
      ...own,
      // The order the kubelet keeps them in, others' conditions included (they are not sent).
      '$setElementOrder/conditions': conditions.map((c) => ({ type: c.type })),
      conditions: [
        ...conditions.filter((c) => KUBELET_OWNED.has(c.type)).map((c) => ({ ...c, ...dropped(c) })),
        ...cleared.map((type) => ({ type, $patch: 'delete' })),
      ],
    },
  };
}

/** A refusal that says the view was stale or the pod is another one now. */
function isStale(err: unknown): boolean {
  if (!(err instanceof KubeHttpError)) return false;
  if (err.code === 404 || err.code === 409) return true;
  // A uid precondition that failed is a 409 on the main resource; some paths answer 422.
  return err.code === 422 && /Precondition failed|UID in precondition/i.test(err.status?.message ?? '');
}

export class HttpPort implements KubeletPort {
  constructor(
    private readonly http: KubeHttp,
    private readonly watch: PodWatch,
    private readonly nodes: (name: string) => KubeObject | undefined,
    private readonly events: HttpEventRecorder,
  ) {}

  pods(): Iterable<KubeObject> {
    return [...this.watch.values()];
  }

  pod(namespace: string, name: string): KubeObject | undefined {
    return this.watch.get(namespace, name);
  }

  node(name: string): KubeObject | undefined {
    return this.nodes(name);
  }

  subscribe(listener: (namespace: string, name: string) => void): () => void {
    return this.watch.subscribe(listener);
  }

  async writeStatus(pod: KubeObject, status: Record<string, unknown>): Promise<string | undefined> {
    try {
      const written = await this.http.request<KubeObject>(
        'PATCH',
        `${podPath(pod)}/status`,
        statusPatch(pod, status),
        'application/strategic-merge-patch+json',
      );
      this.watch.put({ ...written, apiVersion: 'v1', kind: 'Pod' });
      return written.metadata.resourceVersion;
    } catch (err) {
      if (isStale(err)) throw new StaleWrite((err as Error).message);
      throw err;
    }
  }

  async removePod(pod: KubeObject): Promise<void> {
    const body = {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      preconditions: { uid: pod.metadata.uid },
    };
    try {
      await this.http.request('DELETE', podPath(pod), body);
    } catch (err) {
      // Gone already, or the name holds another pod now: either way this one is finished.
      if (err instanceof KubeHttpError && (err.code === 404 || err.code === 409)) return;
      throw err;
    }
  }

  event(e: KubeletEventInput): void {
    this.events.record(e);
  }

  async reportNodeImages(node: string, images: readonly { names: string[]; sizeBytes: number }[]): Promise<void> {
    // status.images has no merge key: a strategic-merge patch replaces the list.
    await this.http.request(
      'PATCH',
      `/api/v1/nodes/${encodeURIComponent(node)}/status`,
      { status: { images } },
      'application/strategic-merge-patch+json',
    );
  }
}
