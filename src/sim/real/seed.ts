// The fixture's world on a real API server: namespaces, then pods bound to the agent's nodes
// (spec.nodeName set, as the embedded world places them), each readiness-gate condition written
// afterwards through pods/status as `kwave adopt` does (a real server keeps no status from a
// create). The agent then pulls and starts them; seeding ends when every pod whose images run is
// Ready (or, without a gate condition True, has its containers ready).
import pLimit from 'p-limit';
import { realSleep as sleep } from '../../sleep.js';
import { KubeHttpError, type KubeHttp } from '../agent/kubeHttp.js';
import type { NodeAgent } from '../agent/index.js';
import type { Fixture } from '../fixture.js';
import type { ImageTable } from '../images.js';
import { parseImageRef } from '../images.js';
import { rfc3339 } from '../kubelet/pods.js';
import { conditionStatus, type PodCondition } from '../podStatus.js';
import type { KubeObject } from '../store.js';
import { namespaceObject, pdbObject, podManifest, type WorldSummary } from '../world.js';
import { isControllerKind } from '../workloads.js';
import { seedControlledWorkloads } from './seedWorkloads.js';

export interface SeedOptions {
  /** Bound on waiting for service accounts and for the pods to run. Default 180 s. */
  timeoutMs?: number;
  now?: () => Date;
}

/** Polls `ok` until it holds; throws naming `what` after `timeoutMs`. */
async function until(what: string, timeoutMs: number, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`real control plane: timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Creates the fixture's world through `http` (an admin client) and waits until its pods run. */
export async function seedRealWorld(
  http: KubeHttp,
  agent: NodeAgent,
  fixture: Fixture,
  images: ImageTable,
  options: SeedOptions = {},
): Promise<WorldSummary> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  const now = options.now ?? (() => new Date());
  const pdbs = fixture.podDisruptionBudgets ?? [];
  const namespaces = [
    ...new Set(['default', ...fixture.workloads.map((w) => w.namespace), ...pdbs.map((p) => p.namespace)]),
  ];
  for (const ns of namespaces) {
    await http.request('POST', '/api/v1/namespaces', namespaceObject(ns)).catch((err: unknown) => {
      if (!(err instanceof KubeHttpError && err.code === 409)) throw err;
    });
  }
  // The ServiceAccount admission plugin refuses pods until the namespace's `default` account exists.
  for (const ns of namespaces) {
    await until(`the service account ${ns}/default`, timeoutMs, () =>
      http.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`).then(
        () => true,
        () => false,
      ),
    );
  }

  const limit = pLimit(16);
  const awaited = new Map<string, 'Ready' | 'ContainersReady'>();
  let pods = 0;
  let startingPods = 0;
  const jobs: Promise<void>[] = [];
  for (const w of fixture.workloads) {
    if (isControllerKind(w.kind)) continue; // created below, their pods by their controllers
    const nodes = w.nodes ?? fixture.nodes.map((n) => n.name);
    const runnable = w.containers.every((c) => {
      const info = images.lookup(c.image);
      return info && !info.pullFails && !info.crash && !('error' in parseImageRef(c.image));
    });
    for (let i = 0; i < w.replicas; i++) {
      // Owners of the embedded world are names only: on a real server the garbage collector
      // would delete pods whose owner does not exist, so they are left out here.
      const manifest = podManifest(w, i, nodes[i % nodes.length]!);
      const key = `${w.namespace}/${manifest.metadata.name}`;
      pods++;
      if (!runnable) startingPods++;
      else awaited.set(key, w.readinessGate?.condition === 'True' || !w.readinessGate ? 'Ready' : 'ContainersReady');
      const gate = w.readinessGate;
      jobs.push(
        limit(async () => {
          await http.request('POST', `/api/v1/namespaces/${w.namespace}/pods`, manifest);
          if (!gate || gate.condition === 'absent') return;
          const condition: PodCondition = {
            type: gate.conditionType,
            status: gate.condition,
            lastProbeTime: null,
            lastTransitionTime: rfc3339(now()),
          };
          await http.request(
            'PATCH',
            `/api/v1/namespaces/${w.namespace}/pods/${manifest.metadata.name}/status`,
            { status: { conditions: [condition] } },
            'application/strategic-merge-patch+json',
          );
        }),
      );
    }
  }
  await Promise.all(jobs);
  const controlled = await seedControlledWorkloads(http, fixture, images, { timeoutMs, now });
  for (const [key, want] of controlled.awaited) awaited.set(key, want);
  pods += controlled.pods;
  startingPods += controlled.startingPods;
  // The real disruption controller keeps their status.
  for (const p of pdbs)
    await http.request('POST', `/apis/policy/v1/namespaces/${p.namespace}/poddisruptionbudgets`, pdbObject(p));
  await waitRunning(agent, awaited, timeoutMs);
  return { namespaces: namespaces.length, nodes: fixture.nodes.length, pods, startingPods };
}

/** Resolves once every pod of `awaited` has the condition named there True, as the agent's watch sees it. */
function waitRunning(
  agent: NodeAgent,
  awaited: Map<string, 'Ready' | 'ContainersReady'>,
  timeoutMs: number,
): Promise<void> {
  const left = new Map(awaited);
  const check = (pod: KubeObject | undefined, key: string) => {
    const want = left.get(key);
    if (!want || !pod) return;
    if (conditionStatus((pod.status as { conditions?: PodCondition[] } | undefined)?.conditions, want) === 'True')
      left.delete(key);
  };
  return new Promise<void>((resolve, reject) => {
    const done = () => {
      if (left.size > 0) return false;
      clearTimeout(timer);
      stop();
      resolve();
      return true;
    };
    const stop = agent.subscribe((namespace, name) => {
      check(agent.pod(namespace, name), `${namespace}/${name}`);
      done();
    });
    const timer = setTimeout(() => {
      stop();
      reject(
        new Error(
          `real control plane: ${left.size} pods not running after ${timeoutMs / 1000} s (e.g. ${[...left.keys()].slice(0, 3).join(', ')})`,
        ),
      );
    }, timeoutMs);
    for (const key of [...left.keys()]) {
      const slash = key.indexOf('/');
      check(agent.pod(key.slice(0, slash), key.slice(slash + 1)), key);
    }
    done();
  });
}
