// An in-memory fleet for the runner's unit tests: a tiny kubelet that closes and opens Ready with
// the gate and fails pulls of nginx:broken; it counts writes and the most pods drained at once.
import type { V1Pod } from '@kubernetes/client-node';
import { KubeError } from '../../../src/cluster/kubeError.js';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import type { NodeSighting } from '../../../src/rollout/nodeHealth.js';
import type { FleetView, NodeView, RunnerDeps } from '../../../src/rollout/runner.js';
import type { ControlNote, RemoteControl } from '../../../src/rollout/runnerDeps.js';
import { GATE, makePod } from '../inplace/fixtures.js';

/**
 * An in-memory fleet whose "kubelet" reacts at once: Ready follows the gate; nginx:broken never
 * pulls, nor any image on the pods named in `brokenPods`.
 */
export function fleet(n: number, options: { forbidStatusFor?: string; brokenPods?: ReadonlySet<string> } = {}) {
  const pods = new Map<string, V1Pod>();
  for (let i = 0; i < n; i++)
    pods.set(`web/web-${i}`, makePod({ name: `web-${i}`, namespace: 'web', uid: `u${i}`, rv: '10' }));
  const listeners = new Set<(c: { pod: V1Pod; type: 'modified' | 'deleted' }) => void>();
  const waiters = new Set<() => void>();
  const writes: string[] = [];
  /** The most pods at once, as the fleet itself holds them: gate closed, and not Ready. */
  const most = { gateClosed: 0, notReady: 0 };
  /** A new version of the pod, its Ready the kubelet's rule over the gate and the container, unless `staleReady` (as a kubelet writing back a Ready it cached). */
  const update = (key: string, change: (p: V1Pod) => void, staleReady?: 'True' | 'False'): V1Pod => {
    const p = structuredClone(pods.get(key)!);
    change(p);
    const gate = p.status!.conditions!.find((c) => c.type === GATE)!;
    const cs = p.status!.containerStatuses![0]!;
    p.status!.conditions!.find((c) => c.type === 'Ready')!.status =
      staleReady ?? (gate.status === 'True' && cs.ready ? 'True' : 'False');
    p.metadata!.resourceVersion = String(Number(p.metadata!.resourceVersion) + 1);
    pods.set(key, p);
    const all = [...pods.values()];
    const count = (type: string, status: string) =>
      all.filter((q) => q.status!.conditions!.find((c) => c.type === type)?.status === status).length;
    most.gateClosed = Math.max(most.gateClosed, count(GATE, 'False'));
    most.notReady = Math.max(most.notReady, count('Ready', 'False'));
    for (const l of listeners) l({ pod: p, type: 'modified' });
    for (const w of [...waiters]) w();
    return p;
  };
  /** Someone else deletes the pod (an eviction, the pod GC once its node is gone). */
  const remove = (key: string): void => {
    const p = pods.get(key)!;
    pods.delete(key);
    for (const l of listeners) l({ pod: p, type: 'deleted' });
    for (const w of [...waiters]) w();
  };
  const view: FleetView = {
    get: (ns, name) => pods.get(`${ns}/${name}`),
    getFresh: async (ns, name) => pods.get(`${ns}/${name}`),
    list: () => [...pods.values()],
    onChange: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    waitFor: (ns, name, predicate, o) =>
      new Promise((resolve) => {
        const check = () => {
          const p = pods.get(`${ns}/${name}`);
          if (p && predicate(p)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(p);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          resolve('timeout');
        }, o.timeoutMs);
        waiters.add(check);
        check();
      }),
  };
  const writer = {
    patchPodStatus: async (ns: string, name: string, body: object) => {
      writes.push(`status ${name}`);
      if (name === options.forbidStatusFor)
        throw new KubeError(403, 'Forbidden', 'pods "x" is forbidden: cannot patch resource "pods/status"');
      // A guarded write (the flow's gate patches) meets a 409 if the pod changed since, as on a server.
      const guard = (body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
      if (guard !== undefined && guard !== pods.get(`${ns}/${name}`)?.metadata?.resourceVersion)
        throw new KubeError(409, 'Conflict', `the object has been modified (pod ${name})`);
      const cond = (body as { status: { conditions: { status: string }[] } }).status.conditions[0]!;
      return update(`${ns}/${name}`, (p) =>
        Object.assign(
          p.status!.conditions!.find((c) => c.type === GATE)!,
          cond,
        ),
      );
    },
    patchPod: async (ns: string, name: string, body: object) => {
      writes.push(`patch ${name}`);
      const b = body as {
        metadata: { annotations: Record<string, string> };
        spec: { containers: { name: string; image: string }[] };
      };
      const image = b.spec.containers[0]!.image;
      // Let the caller see its own write before the kubelet's reaction, as with a real server.
      setTimeout(() =>
        update(`${ns}/${name}`, (p) => {
          const cs = p.status!.containerStatuses![0]!;
          if (image === 'nginx:broken' || options.brokenPods?.has(name)) {
            cs.ready = false;
            cs.state = { waiting: { reason: 'ErrImagePull', message: `failed to pull image "${image}": not found` } };
          } else {
            cs.image = `docker.io/library/${image}`;
            cs.imageID = `docker.io/library/nginx@sha256:${image === 'nginx:1.25.3' ? 'b'.repeat(64) : 'a'.repeat(64)}`;
            cs.containerID = `containerd://${name}-1`;
            cs.restartCount += 1;
            cs.ready = true;
            cs.state = { running: { startedAt: new Date() } };
          }
        }),
      );
      return update(`${ns}/${name}`, (p) => {
        p.metadata!.annotations = { ...p.metadata!.annotations, ...b.metadata.annotations };
        p.spec!.containers[0]!.image = image;
      });
    },
    resizePod: async (_ns: string, name: string): Promise<V1Pod> => {
      throw new Error(`the fake fleet does not resize (${name})`);
    },
    createEvent: async () => ({}),
  };
  return { pods, view, writer, writes, most, update, remove };
}

/**
 * `count` nodes n0…, pod web-i on n(i % count), all Ready; `down` makes one NotReady (since 12 s
 * ago), with `podsNotReady` its pods too, as the node lifecycle controller marks them.
 */
export function fleetNodes(f: ReturnType<typeof fleet>, count: number) {
  for (const [key, p] of f.pods) p.spec!.nodeName = `n${Number(key.split('-')[1]) % count}`;
  const state = new Map<string, NodeSighting>();
  const listeners = new Set<(name: string) => void>();
  const set = (name: string, ready: boolean) => {
    state.set(name, {
      node: {
        metadata: { name },
        status: {
          conditions: [
            {
              type: 'Ready',
              status: ready ? 'True' : 'Unknown',
              reason: ready ? 'KubeletReady' : 'NodeStatusUnknown',
              lastTransitionTime: new Date(Date.now() - 12_000),
            },
          ],
        },
      },
    });
    for (const l of listeners) l(name);
  };
  for (let i = 0; i < count; i++) set(`n${i}`, true);
  const view: NodeView = {
    get: (name) => state.get(name),
    onChange: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
  const down = (name: string, options: { podsNotReady?: boolean } = {}) => {
    set(name, false);
    if (!options.podsNotReady) return;
    for (const [key, p] of f.pods)
      if (p.spec!.nodeName === name)
        f.update(key, (q) => {
          q.status!.containerStatuses![0]!.ready = false;
        });
  };
  return { view, down, up: (name: string) => set(name, true) };
}

/**
 * The runner's deps over a fake fleet: events collected into `events`, never stopped; sleeps are
 * instant and move the run's clock on by their length (a node's grace runs out at once).
 */
export const fleetDeps = (f: ReturnType<typeof fleet>, events: RolloutEvent[]): RunnerDeps => {
  let slept = 0;
  return {
    writer: f.writer,
    view: f.view,
    sink: (e: RolloutEvent): void => void events.push(e),
    now: () => Date.now() + slept,
    sleep: async (ms) => {
      slept += Math.max(0, ms);
      return true;
    },
    stop: new AbortController().signal,
  };
};

/** A RemoteControl a test sets by hand (the shell's follows the rollout record). */
export function remote() {
  const state: { paused?: ControlNote; aborted?: ControlNote; resumed?: ControlNote } = {};
  const listeners = new Set<() => void>();
  const fire = () => [...listeners].forEach((l) => l());
  const control: RemoteControl = {
    paused: () => state.paused,
    aborted: () => state.aborted,
    resumed: () => state.resumed,
    onChange: (l) => (listeners.add(l), () => listeners.delete(l)),
  };
  return { control, state, fire };
}

/** A sink that records `events` and, at the first pod start, has `ops@ci` abort through `rc`. */
export function abortAtFirstPodStart(rc: ReturnType<typeof remote>, events: RolloutEvent[]): (e: RolloutEvent) => void {
  return (e) => {
    events.push(e);
    if (e.event === 'pod-start' && !rc.state.aborted) {
      rc.state.aborted = { by: 'ops@ci', at: '2026-12-01T12:00:00.000Z' };
      rc.fire();
    }
  };
}
