// Disruptions the simulator can inject from outside kwave (the admin endpoints): a pod deleted
// by someone else (an eviction, an operator), and run-time changes of the API fault settings.
import { NO_FAULTS, parseFaults, type Faults } from './faults.js';
import { StoreError, type KubeObject, type Store } from './store.js';
import { rfc3339 } from './clock.js';

/**
 * Deletes a pod as the API server does on DELETE: a pod bound to a node is marked with
 * deletionTimestamp (now + grace) and its kubelet finishes the job; an unbound pod, or grace 0,
 * goes at once. Returns the pod as left in the store (or its last state when removed).
 */
export function deletePod(
  store: Store,
  namespace: string,
  name: string,
  gracePeriodSeconds: number | undefined,
  now: Date = new Date(),
): KubeObject {
  const pod = store.get('pods', namespace, name);
  if (!pod) throw new StoreError('NotFound', 'pods', name);
  if (pod.metadata.deletionTimestamp) return pod;
  const spec = (pod.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
  const grace = gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
  if (!spec.nodeName || grace === 0) return store.remove('pods', namespace, name);
  return store.update('pods', {
    ...pod,
    metadata: {
      ...pod.metadata,
      deletionTimestamp: rfc3339(new Date(now.getTime() + grace * 1000)),
      deletionGracePeriodSeconds: grace,
    },
  });
}

/**
 * Merges a JSON object such as `{"errorRate": 0.1, "errorCodes": [503]}` into the live faults
 * (which the API server reads on every request). Validation is parseFaults'; throws an Error
 * that says what is wrong, leaving `live` unchanged.
 */
export function mergeFaults(live: Faults, patch: unknown): Faults {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch))
    throw new Error('expected a JSON object of fault settings');
  const parts = Object.entries(patch as Record<string, unknown>).map(([k, v]) => {
    if (Array.isArray(v)) return `${k}=${v.join('|')}`;
    if (typeof v !== 'number') throw new Error(`fault ${k}: expected a number, found ${JSON.stringify(v)}`);
    return `${k}=${v}`;
  });
  const merged = parseFaults(parts.join(','), live);
  Object.assign(live, merged);
  return live;
}

/** Switches every fault off, in place. */
export function resetFaults(live: Faults): Faults {
  Object.assign(live, { ...NO_FAULTS, errorCodes: [...NO_FAULTS.errorCodes] });
  return live;
}
