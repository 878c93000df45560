// Pure: the order of a multi-cluster plan's waves across its clusters. A step is one wave in one
// cluster (its pods, then the gates due after it). `sequential` runs every step of the first
// cluster, then of the second, …; `interleaved` runs wave 1 in every cluster (in the listed
// order), then wave 2 in every cluster, …. Steps run one at a time, so a halt in one cluster
// finds no pod in flight in another, and "no new pod starts anywhere" holds at once.
import type { ClusterOrder } from '../plan/types.js';

/** Where one cluster's runner stands: the lowest wave it has not finished (running or waiting to start), or `done`. */
export type ClusterPosition = number | 'done';

export interface ClusterStep {
  cluster: string;
  wave: number;
}

/**
 * The sort key of wave `wave` of the cluster at `index` (0-based, in the plan's list).
 * sequential: (cluster, wave) — cluster 1's wave 3 comes before cluster 2's wave 1;
 * interleaved: (wave, cluster) — cluster 2's wave 1 comes before cluster 1's wave 2.
 */
export function stepKey(order: ClusterOrder, index: number, wave: number): [number, number] {
  return order === 'sequential' ? [index, wave] : [wave, index];
}

function before(a: [number, number], b: [number, number]): boolean {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
}

/**
 * Whether the cluster at `index` may start `wave` now: every step ordered before it, in every
 * other cluster, is finished. A cluster at position p has finished all its steps below p and none
 * from p on (runners go through their waves in increasing order), so the test is that each other
 * cluster's position comes after (index, wave), or that cluster is done.
 *
 * Worked example, interleaved, three clusters at positions [2, 1, 1] (the first has finished
 * wave 1): the second (index 1) may start wave 1, key (1,1): the first stands at (2,0) and the
 * third at (1,2), both after it. The first may not start wave 2, key (2,0): the second's (1,1)
 * comes before it. Keys of two clusters never tie (their indices differ).
 */
export function mayStartWave(
  order: ClusterOrder,
  positions: readonly ClusterPosition[],
  index: number,
  wave: number,
): boolean {
  const mine = stepKey(order, index, wave);
  return positions.every((p, i) => i === index || p === 'done' || before(mine, stepKey(order, i, p)));
}

/**
 * Every step of the plan in the order it runs, for `kwave plan`: each cluster with the waves it
 * will run (after the pods already done are counted; a cluster with nothing to do has none).
 */
export function orderSteps(
  order: ClusterOrder,
  clusters: readonly { name: string; waves: readonly number[] }[],
): ClusterStep[] {
  const steps = clusters.flatMap((c, index) =>
    c.waves.map((wave) => ({ key: stepKey(order, index, wave), step: { cluster: c.name, wave } })),
  );
  return steps.sort((a, b) => (before(a.key, b.key) ? -1 : before(b.key, a.key) ? 1 : 0)).map((s) => s.step);
}
