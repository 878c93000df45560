// How kwave asks for Leases (one runner per plan): get, create and renew, in the control lane
// (requester.ts), with MicroTime fields written as the API server wants them.
import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { objectAnswer } from './answers.js';
import { leasePath, leasesPath } from './paths.js';
import type { LaneOptions, Requester } from './requester.js';

const CONTROL: LaneOptions = Object.freeze({ lane: 'control' });

export interface LeaseCallOptions {
  /** Give up once this long has passed since the call (attempts, retries and their waits). */
  withinMs?: number;
}

export async function getLease(
  requester: Requester,
  namespace: string,
  name: string,
  options: LeaseCallOptions,
): Promise<V1Lease> {
  return leaseTimes(
    (await objectAnswer(
      requester,
      { verb: 'get', resource: 'leases', namespace },
      { method: 'GET', path: leasePath(namespace, name) },
      { ...CONTROL, ...options },
    )) as V1Lease,
  );
}

export async function createLease(requester: Requester, namespace: string, body: V1Lease): Promise<V1Lease> {
  return leaseTimes(
    (await objectAnswer(
      requester,
      { verb: 'create', resource: 'leases', namespace },
      { method: 'POST', path: leasesPath(namespace), body: leaseTimes(body) },
      CONTROL,
    )) as V1Lease,
  );
}

export async function updateLease(
  requester: Requester,
  namespace: string,
  body: V1Lease,
  options: LeaseCallOptions,
): Promise<V1Lease> {
  const name = body.metadata?.name;
  if (!name) throw new Error('updateLease: metadata.name is required');
  const req = { method: 'PUT', path: leasePath(namespace, name), body: leaseTimes(body) } as const;
  return leaseTimes(
    (await objectAnswer(requester, { verb: 'update', resource: 'leases', namespace }, req, {
      ...CONTROL,
      ...options,
    })) as V1Lease,
  );
}

/**
 * MicroTime fields come as strings, and a plain Date would go out with millisecond precision,
 * which the API server refuses for MicroTime; V1MicroTime both ways (it writes microseconds).
 */
function leaseTimes(lease: V1Lease): V1Lease {
  const spec = lease.spec;
  if (!spec) return lease;
  const micro = (t: unknown) =>
    t === undefined || t === null || t instanceof V1MicroTime ? t : new V1MicroTime(t as string | Date);
  return {
    ...lease,
    spec: {
      ...spec,
      acquireTime: micro(spec.acquireTime) as V1MicroTime | undefined,
      renewTime: micro(spec.renewTime) as V1MicroTime | undefined,
    },
  };
}
