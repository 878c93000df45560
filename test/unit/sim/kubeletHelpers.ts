// Shared set-up for the kubelet tests: a store with the default world, a fast kubelet, and a
// wait that resolves when a pod in the store satisfies a predicate.
import { defaultFixture, type Fixture } from '../../../src/sim/fixture.js';
import { ImageTable } from '../../../src/sim/images.js';
import { Kubelet } from '../../../src/sim/kubelet.js';
import type { ContainerStatus, PodCondition } from '../../../src/sim/podStatus.js';
import { Store, type KubeObject } from '../../../src/sim/store.js';
import { buildWorld } from '../../../src/sim/world.js';

export interface Harness {
  store: Store;
  kubelet: Kubelet;
  images: ImageTable;
  close(): void;
}

/** The default world of `pods` pods, with every duration 100 times shorter. */
export function harness(pods = 2, fixture: Fixture = defaultFixture(pods)): Harness {
  const store = new Store();
  const images = new ImageTable(fixture.images);
  const kubelet = new Kubelet({ store, images, timeScale: 0.01, seed: 7 });
  kubelet.start();
  buildWorld(store, kubelet, images, fixture);
  return { store, kubelet, images, close: () => kubelet.stop() };
}

export function containerStatus(pod: KubeObject, name = 'nginx'): ContainerStatus {
  const s = (pod.status as { containerStatuses?: ContainerStatus[] }).containerStatuses?.find((c) => c.name === name);
  if (!s) throw new Error(`no status for container ${name}`);
  return s;
}

export function condition(pod: KubeObject, type: string): PodCondition | undefined {
  return (pod.status as { conditions?: PodCondition[] }).conditions?.find((c) => c.type === type);
}

/** Resolves with the pod once `predicate` holds for it (or `undefined` once it is gone, if `gone`). */
export function waitForPod(
  store: Store,
  namespace: string,
  name: string,
  predicate: (pod: KubeObject) => boolean,
  timeoutMs = 10_000,
): Promise<KubeObject> {
  return new Promise((resolve, reject) => {
    let unsubscribe = () => {};
    const timer = setTimeout(() => {
      unsubscribe();
      reject(
        new Error(
          `timed out waiting for pod ${namespace}/${name}; status now: ${JSON.stringify(store.get('pods', namespace, name)?.status)}`,
        ),
      );
    }, timeoutMs);
    const check = () => {
      const pod = store.get('pods', namespace, name);
      if (pod && holds(predicate, pod)) {
        clearTimeout(timer);
        unsubscribe();
        resolve(pod);
      }
    };
    unsubscribe = store.subscribe(check);
    check();
  });
}

/** A predicate that throws (e.g. no container status yet) does not hold. */
function holds(predicate: (pod: KubeObject) => boolean, pod: KubeObject): boolean {
  try {
    return predicate(pod);
  } catch {
    return false;
  }
}

export function waitForGone(store: Store, namespace: string, name: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let unsubscribe = () => {};
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`timed out waiting for pod ${namespace}/${name} to go`));
    }, timeoutMs);
    const check = () => {
      if (!store.get('pods', namespace, name)) {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      }
    };
    unsubscribe = store.subscribe(check);
    check();
  });
}

/** What the API server stores for an image patch of one container (spec changes only). */
export function patchImage(
  store: Store,
  namespace: string,
  name: string,
  container: string,
  image: string,
): KubeObject {
  const pod = store.get('pods', namespace, name)!;
  const spec = pod.spec as { containers: { name: string; image: string }[] };
  return store.update('pods', {
    ...pod,
    spec: { ...spec, containers: spec.containers.map((c) => (c.name === container ? { ...c, image } : c)) },
  });
}

/** What a client's pods/status write of one condition does. */
export function setCondition(
  store: Store,
  namespace: string,
  name: string,
  type: string,
  status: 'True' | 'False',
): KubeObject {
  const pod = store.get('pods', namespace, name)!;
  const conditions = ((pod.status as { conditions?: PodCondition[] }).conditions ?? []).filter((c) => c.type !== type);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return store.update('pods', {
    ...pod,
    status: {
      ...(pod.status as object),
      conditions: [{ type, status, lastProbeTime: null, lastTransitionTime: now }, ...conditions],
    },
  });
}

export function eventsFor(
  store: Store,
  namespace: string,
  name: string,
): { reason: string; message: string; type: string; count: number }[] {
  return store
    .list('events', namespace)
    .filter((e) => (e.involvedObject as { name: string }).name === name)
    .map((e) => ({
      reason: e.reason as string,
      message: e.message as string,
      type: e.type as string,
      count: e.count as number,
    }));
}
