// The fixture's Deployments, StatefulSets and DaemonSets on a real API server: each object is
// created, its controller creates the pods (the scheduler places them on the agent's nodes), and
// the seeder sets each new pod's readiness-gate condition through pods/status, as `kwave adopt`
// would. Pods a controller creates later (a replacement) get no condition from anyone: as on a
// real cluster, that is for `kwave adopt` or the application.
import { KubeHttpError, type KubeHttp } from '../agent/kubeHttp.js';
import type { Fixture, FixtureWorkload } from '../fixture.js';
import type { ImageTable } from '../images.js';
import { parseImageRef } from '../images.js';
import { rfc3339 } from '../kubelet/pods.js';
import type { PodCondition } from '../podStatus.js';
import type { KubeObject } from '../store.js';
import { containerSpecs } from '../world.js';
import { isControllerKind, workloadObject, type ControllerKind } from '../workloads.js';

const PLURAL: Record<ControllerKind, string> = {
  Deployment: 'deployments',
  StatefulSet: 'statefulsets',
  DaemonSet: 'daemonsets',
};

export interface ControlledSeed {
  /** `namespace/name` of each pod → the condition that says it runs. */
  awaited: Map<string, 'Ready' | 'ContainersReady'>;
  pods: number;
  startingPods: number;
}

const selectorOf = (w: FixtureWorkload) =>
  Object.entries(w.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** Creates the workloads, waits for their pods to exist (bounded), and opens their gates. */
export async function seedControlledWorkloads(
  http: KubeHttp,
  fixture: Fixture,
  images: ImageTable,
  options: { timeoutMs: number; now: () => Date },
): Promise<ControlledSeed> {
  const out: ControlledSeed = { awaited: new Map(), pods: 0, startingPods: 0 };
  const workloads = fixture.workloads.filter((w): w is FixtureWorkload & { kind: ControllerKind } =>
    isControllerKind(w.kind),
  );
  for (const w of workloads) {
    await http.request(
      'POST',
      `/apis/apps/v1/namespaces/${w.namespace}/${PLURAL[w.kind]}`,
      workloadObject(w, containerSpecs(w)),
    );
  }
  for (const w of workloads) {
    const runnable = w.containers.every((c) => {
      const info = images.lookup(c.image);
      return info && !info.pullFails && !info.crash && !('error' in parseImageRef(c.image));
    });
    const pods = await waitForPods(http, w, options.timeoutMs);
    const gate = w.readinessGate;
    for (const pod of pods) {
      const key = `${w.namespace}/${pod.metadata.name}`;
      out.pods++;
      if (!runnable) out.startingPods++;
      else out.awaited.set(key, gate?.condition === 'True' || !gate ? 'Ready' : 'ContainersReady');
      if (!gate || gate.condition === 'absent') continue;
      const condition: PodCondition = {
        type: gate.conditionType,
        status: gate.condition,
        lastProbeTime: null,
        lastTransitionTime: rfc3339(options.now()),
      };
      await http.request(
        'PATCH',
        `/api/v1/namespaces/${w.namespace}/pods/${pod.metadata.name}/status`,
        { status: { conditions: [condition] } },
        'application/strategic-merge-patch+json',
      );
    }
  }
  return out;
}

/** Polls the workload's pods until its controller made all of them (a DaemonSet: one per node it runs on). */
async function waitForPods(http: KubeHttp, w: FixtureWorkload, timeoutMs: number): Promise<KubeObject[]> {
  const deadline = Date.now() + timeoutMs;
  const path = `/api/v1/namespaces/${w.namespace}/pods?labelSelector=${encodeURIComponent(selectorOf(w))}`;
  for (;;) {
    const pods = (
      await http.request<{ items: KubeObject[] }>('GET', path).catch((err: unknown) => {
        if (err instanceof KubeHttpError) return { items: [] };
        throw err;
      })
    ).items.filter((p) => !p.metadata.deletionTimestamp);
    if (pods.length >= w.replicas) return pods;
    if (Date.now() > deadline)
      throw new Error(
        `real control plane: ${w.kind} ${w.namespace}/${w.name} has ${pods.length} of ${w.replicas} pods after ${timeoutMs / 1000} s`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}
