// The faults that hit pods and nodes from outside kwave, on either backend. Evictions and crashes
// are driven by the cluster's change feed, so that they land at the moment they mean: an eviction
// at the very change in which kwave closes a pod's gate or patches its image, a crash once a
// pod's gate has reopened on the target. The node deletion and the slow watch are timed from
// kwave's first image patch, so that they land mid-wave. What landed is noted in `Observed` for
// the invariants.
import type { KubeObject } from '../../src/sim/store.js';
import { gateOf, isSelected, specImage, type ChaosCluster } from './cluster.js';
import type { Observed } from './invariants.js';
import { TARGET_BROKEN, type Scenario } from './scenario.js';

const STATE = 'kwave.dev/in-place-state';

/** Follows the feed from the pods seen at the start (`initial`); returns the unsubscribe. */
export function startPodFaults(
  s: Scenario,
  cluster: ChaosCluster,
  observed: Observed,
  initial: Iterable<KubeObject>,
  timers: NodeJS.Timeout[],
): () => void {
  const last = new Map<string, KubeObject>([...initial].map((p) => [p.metadata.name, p]));
  const patched = new Set<string>();
  const seen = { drained: 0, patched: 0, reopened: 0 };
  const fail = (what: string) => (err: unknown) => observed.problems.push(`${what}: ${(err as Error).message}`);
  const evictAt = (moment: 'drained' | 'patched', name: string) => {
    for (const e of s.evictions.filter((e) => e.moment === moment && e.nth === seen[moment]))
      void cluster.evictPod(name, e.graceSeconds).then(
        (ok) => {
          if (ok) observed.evicted.add(name);
        },
        fail(`evicting ${name}`),
      );
  };
  return cluster.subscribe((change) => {
    if (change.resource !== 'pods' || !isSelected(change.object)) return;
    const pod = change.object;
    const name = pod.metadata.name;
    const previous = last.get(name);
    if (change.type === 'DELETED') {
      last.delete(name);
      return;
    }
    last.set(name, pod);
    // An image patch accepted on a pod already being deleted: kwave's patch is guarded by the
    // version it decided on, so only a decision that ignored the deletionTimestamp gets here.
    const same = previous?.metadata.uid === pod.metadata.uid;
    if (same && previous?.metadata.deletionTimestamp && specImage(previous) !== specImage(pod))
      observed.patchedWhileTerminating.push(`${name} (${specImage(previous)} → ${specImage(pod)})`);
    if (observed.chaosOver || pod.metadata.deletionTimestamp) return;
    const gate = gateOf(pod);
    const gateBefore = same ? gateOf(previous!) : undefined;
    if (gate === 'False' && gateBefore !== 'False') {
      seen.drained++;
      evictAt('drained', name);
    }
    const state = (pod.metadata.annotations as Record<string, string> | undefined)?.[STATE];
    if (state !== undefined && !patched.has(name)) {
      patched.add(name);
      seen.patched++;
      evictAt('patched', name);
    }
    // The gate reopened on the target: the pod's upgrade is proven, and it counts once Ready.
    if (gate === 'True' && gateBefore === 'False' && s.image !== TARGET_BROKEN && specImage(pod) === s.image) {
      seen.reopened++;
      for (const c of s.crashes.filter((c) => c.nth === seen.reopened))
        timers.push(
          setTimeout(() => {
            if (observed.chaosOver) return;
            void cluster.crashContainer(name).then(
              (ok) => {
                if (ok) observed.crashes.set(name, (observed.crashes.get(name) ?? 0) + 1);
              },
              fail(`crashing ${name}`),
            );
          }, c.afterMs),
        );
    }
  });
}

/**
 * The node deletion, on a timer from now (kwave's first image patch), and the slow watch, timed
 * from `backendFaultsOver` (the backend's outages over: a watch held back while the API server
 * is down holds nothing back).
 */
export function startTimedFaults(
  s: Scenario,
  cluster: ChaosCluster,
  observed: Observed,
  timers: NodeJS.Timeout[],
  backendFaultsOver: Promise<void>,
): void {
  const { nodeDeletion, slowWatch } = s;
  if (nodeDeletion)
    timers.push(
      setTimeout(() => {
        observed.nodesDeleted.add(nodeDeletion.node);
        void cluster
          .deleteNode(nodeDeletion.node)
          .catch((err: unknown) =>
            observed.problems.push(`deleting node ${nodeDeletion.node}: ${(err as Error).message}`),
          );
      }, nodeDeletion.atMs),
    );
  if (slowWatch) {
    const { setWatchDelay } = cluster;
    if (!setWatchDelay) {
      observed.problems.push('slow watch: this backend has no watch delay');
      return;
    }
    void backendFaultsOver.then(() => {
      if (observed.chaosOver) return;
      timers.push(setTimeout(() => setWatchDelay(slowWatch.delayMs), slowWatch.atMs));
      timers.push(
        setTimeout(() => {
          setWatchDelay(0);
          if (!slowWatch.cutAtEnd) return;
          if (!cluster.cutWatches) observed.problems.push('watch cut: this backend cannot cut watches');
          else cluster.cutWatches();
        }, slowWatch.atMs + slowWatch.forMs),
      );
    });
  }
}
