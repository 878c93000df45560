// Who holds a plan's Lease and whether it has expired: the pure part of the lease (`leaseView`,
// `describeHolder`), which `kwave status` shows too, and the one read of it for display.
// The Lease is named `kwave-<plan>`, like the rollout record's ConfigMap, in the plan's first
// target namespace.
import type { V1Lease } from '@kubernetes/client-node';
import type { Cluster } from '../cluster/cluster.js';
import { KubeError } from '../cluster/kubeError.js';
import { formatAge } from '../durationText.js';

/** The plan's Lease: `kwave-<plan>`, the name its rollout record has too. */
export function leaseName(plan: string): string {
  return `kwave-${plan}`;
}

export const DEFAULT_LEASE_SECONDS = 15;

/** Who holds a lease, as seen at `now`. */
export interface LeaseView {
  holder?: string;
  acquiredAt?: Date;
  renewedAt?: Date;
  durationSeconds: number;
  transitions: number;
  /** No holder, or the holder stopped renewing (renewTime + leaseDurationSeconds < now). */
  free: boolean;
  expired: boolean;
}

/** A plain Date (V1MicroTime would print microseconds) from whatever the client handed over. */
export const toDate = (t: unknown): Date | undefined => {
  if (t instanceof Date) return Number.isNaN(t.getTime()) ? undefined : new Date(t.getTime());
  if (typeof t === 'string') {
    const d = new Date(t);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
};

export function leaseView(lease: V1Lease, now: Date): LeaseView {
  const spec = lease.spec ?? {};
  const holder = spec.holderIdentity || undefined;
  const durationSeconds =
    spec.leaseDurationSeconds && spec.leaseDurationSeconds > 0 ? spec.leaseDurationSeconds : DEFAULT_LEASE_SECONDS;
  const renewedAt = toDate(spec.renewTime) ?? toDate(spec.acquireTime);
  const expired =
    holder !== undefined && (renewedAt === undefined || renewedAt.getTime() + durationSeconds * 1000 < now.getTime());
  return {
    ...(holder === undefined ? {} : { holder }),
    ...(toDate(spec.acquireTime) ? { acquiredAt: toDate(spec.acquireTime) } : {}),
    ...(renewedAt ? { renewedAt } : {}),
    durationSeconds,
    transitions: spec.leaseTransitions ?? 0,
    free: holder === undefined || expired,
    expired,
  };
}

/** `alice@laptop pid 1234 (renewed 3s ago, expires after 15s without renewal)`. */
export function describeHolder(view: LeaseView, now: Date): string {
  if (!view.holder) return 'nobody';
  const ago = view.renewedAt ? `${formatAge(now.getTime() - view.renewedAt.getTime())} ago` : 'never';
  const tail = view.expired
    ? `expired: not renewed for more than ${view.durationSeconds}s`
    : `expires after ${view.durationSeconds}s without renewal`;
  return `${view.holder} (renewed ${ago}${view.renewedAt ? ` at ${view.renewedAt.toISOString()}` : ''}; ${tail})`;
}

/** The slice of Cluster the lock needs (tests pass a fake). */
export type LeaseApi = Pick<Cluster, 'getLease' | 'createLease' | 'updateLease'>;

/** Reads the plan's lease for display; undefined when there is none. */
export async function readLease(
  cluster: Pick<Cluster, 'getLease'>,
  namespace: string,
  plan: string,
  now: Date,
): Promise<LeaseView | undefined> {
  try {
    return leaseView(await cluster.getLease(namespace, leaseName(plan)), now);
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return undefined;
    throw err;
  }
}
